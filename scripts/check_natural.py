"""Build and validate the natural task set (examples/natural/, docs/data.md "The natural set").

The sources are `examples/natural/src/*.yaml`: per problem its statement, signature (function
problems), reference solution and the arguments (function) or stdin texts (stdio) of its public
and extra hidden tests. `--build` runs each reference on the host (our own code, in a child
Python process) to fill in the expected values and writes `examples/natural/problems.jsonl`,
which holds no reference. Without `--build` it checks, and exits 1 naming every problem that
fails:

- the schema (`assistant.problems.natural.schema_problems`: unique ids, public tests among the
  hidden ones, 2-3 public and 6-12 hidden tests, the entry point defined by the reference);
- that problems.jsonl is what the sources build (no hand edit, no stale expected value);
- every reference against ALL its tests in the real sandbox (`Sandbox.run_many`).

    .venv/bin/python scripts/check_natural.py            # check everything
    .venv/bin/python scripts/check_natural.py --build    # rewrite problems.jsonl, then check
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any

from assistant.problems.natural import (
    NATURAL_FILE,
    Source,
    grade_references,
    read_sources,
    schema_problems,
)
from assistant.problems.schema import Problem
from assistant.runtime import open_sandbox
from assistant.settings_loader import load_settings

CALL_CHILD = """
import json, sys
spec = json.loads(sys.stdin.read())
scope = {"__name__": "__main__"}
exec(spec["reference"], scope)
fn = scope[spec["entry"]]
print(json.dumps([repr(eval(f"fn({a})", {"fn": fn})) for a in spec["args"]]))
"""


def _function_tests(src: Source, args: list[str]) -> list[dict[str, str]]:
    spec = json.dumps({"reference": src.reference, "entry": src.entry_point, "args": args})
    done = subprocess.run(
        [sys.executable, "-c", CALL_CHILD], input=spec, capture_output=True, text=True, timeout=60, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{src.id}: the reference failed on the host:\n{done.stderr}")
    values = json.loads(done.stdout)
    return [{"code": f"assert {src.entry_point}({a}) == {v}"} for a, v in zip(args, values)]


def _stdio_tests(src: Source, inputs: list[str]) -> list[dict[str, str]]:
    out = []
    for text in inputs:
        done = subprocess.run(
            [sys.executable, "-c", src.reference], input=text, capture_output=True, text=True, timeout=30, check=False
        )
        if done.returncode != 0:
            raise SystemExit(f"{src.id}: the reference failed on the host for input {text!r}:\n{done.stderr}")
        out.append({"input": text, "output": done.stdout})
    return out


def build_record(src: Source) -> dict[str, Any]:
    """The problem record of one source, its expected values computed by the reference."""
    make = _function_tests if src.kind == "function" else _stdio_tests
    public = make(src, src.public)
    extra = make(src, src.hidden)
    record: dict[str, Any] = {
        "id": src.id,
        "title": src.title,
        "statement": src.statement,
        "kind": src.kind,
    }
    if src.kind == "function":
        record["entry_point"] = src.entry_point
        record["starter_code"] = f"{src.signature}\n    ...\n"
    record["source"] = "natural"
    record["difficulty"] = src.difficulty
    record["public_tests"] = public
    record["hidden_tests"] = public + extra
    return Problem.from_dict(record, src.id).to_dict()


def build(sources: list[Source]) -> str:
    return "".join(json.dumps(build_record(s), ensure_ascii=False) + "\n" for s in sources)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", action="store_true", help="rewrite problems.jsonl from the sources first")
    parser.add_argument("--no-sandbox", action="store_true", help="skip the sandbox run of the references")
    args = parser.parse_args(argv)
    sources = read_sources()
    built = build(sources)
    if args.build:
        NATURAL_FILE.write_text(built, encoding="utf-8")
        print(f"wrote {NATURAL_FILE} ({len(sources)} problems)")
    bad: dict[str, list[str]] = {}
    if NATURAL_FILE.read_text(encoding="utf-8") != built:
        bad.setdefault("problems.jsonl", []).append("is not what the sources build: run with --build")
    for pid, why in schema_problems(sources).items():
        bad.setdefault(pid, []).extend(why)
    if not args.no_sandbox:
        box = open_sandbox(load_settings())
        try:
            start = time.monotonic()
            failures = grade_references(box, sources)
            print(f"graded {len(sources)} references in the sandbox in {time.monotonic() - start:.1f}s")
        finally:
            box.close()
        for pid, why in failures.items():
            bad.setdefault(pid, []).append(why)
    counts = {
        "function": sum(s.kind == "function" for s in sources),
        "stdio": sum(s.kind == "stdio" for s in sources),
    }
    for level in ("easy", "medium", "hard"):
        counts[level] = sum(s.difficulty == level for s in sources)
    print(f"{len(sources)} problems: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    for pid, why in sorted(bad.items()):
        for line in why:
            print(f"FAIL {pid}: {line}")
    print("all references pass" if not bad else f"{len(bad)} problem(s) FAILED")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
