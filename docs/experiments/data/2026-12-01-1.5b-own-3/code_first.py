"""The base 1.5B's first feedback turns on the gate's natural val tasks, replayed greedy with the
reply as sent (free) and with the reply forced to open with a code fence (as own-2's and own-3's
replies all do): how often is the failing program given back unchanged?

Usage: python code_first.py TRAJECTORIES_DB MODEL_DIR SERVER_URL  (a llama.cpp server of the base)
"""

import json
import sys
import urllib.request

from transformers import AutoTokenizer

from assistant.messages.extract import code, same_code
from assistant.store.trajectory_db import Store

FENCE = "```python\n"


def complete(url: str, prompt: str) -> str:
    body = {"prompt": prompt, "n_predict": 768, "temperature": 0.0, "cache_prompt": True}
    headers = {"Content-Type": "application/json"}
    request = urllib.request.Request(url + "/completion", json.dumps(body).encode(), headers)
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read())["content"]


def main() -> None:
    db, model_dir, url = sys.argv[1:4]
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    store = Store(db)
    counts = {"free": [0, 0, 0], "code first": [0, 0, 0]}  # sessions, unchanged, no code
    for session in store.sessions(model="qwen-coder-1.5b", source="eval"):
        turns = store.turns(session.id)
        if "repair" in (session.meta or {}) or len(turns) < 2 or turns[0].passed_hidden:
            continue
        messages = list(turns[1].messages)
        prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        for arm, prefix in (("free", ""), ("code first", FENCE)):
            program = code(prefix + complete(url, prompt + prefix))
            row = counts[arm]
            row[0] += 1
            row[1] += int(bool(program) and same_code(program, turns[0].program))
            row[2] += int(not program)
        print(session.problem_id, {k: v[1] for k, v in counts.items()}, flush=True)
    for arm, (n, unchanged, no_code) in counts.items():
        print(f"{arm}: {unchanged}/{n} unchanged, {no_code} without code")


if __name__ == "__main__":
    main()
