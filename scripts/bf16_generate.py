"""fp32 vs bf16 on this CPU, side by side: the embedded model loaded in each dtype in turn (twice),
8 rows x 32 sampled tokens generated and a 4 x 800-token forward timed (docs/experiments/2026-11-25-bf16-base.md,
the frozen base in bfloat16). Run: .venv/bin/python scripts/bf16_generate.py"""

import gc
import time

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from assistant.serving import models

p = str(models.resolve("qwen-coder"))
tok = AutoTokenizer.from_pretrained(p)
tok.padding_side = "left"
msgs = [
    {"role": "user", "content": "Write a Python function that returns the n-th Fibonacci number, iteratively. " * 8}
]
text = tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
enc = tok([text] * 8, return_tensors="pt", padding=True)
long = torch.randint(100, 20000, (4, 800))
for dt in (torch.float32, torch.bfloat16, torch.float32, torch.bfloat16):
    m = AutoModelForCausalLM.from_pretrained(p, dtype=dt).eval()
    with torch.no_grad():
        m.generate(**enc, max_new_tokens=4, do_sample=False)
        t = time.perf_counter()
        m.generate(**enc, max_new_tokens=32, min_new_tokens=32, do_sample=True, temperature=1.0)
        g = time.perf_counter() - t
        t = time.perf_counter()
        m(long)
        f = time.perf_counter() - t
    print(dt, f"generate 8x32: {g:.1f}s  forward 4x800: {f:.1f}s", flush=True)
    del m
    gc.collect()
