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
- that every source file is in exactly one cohort of `examples/natural/cohorts.yaml` (each cohort
  is split on its own, so adding problems never moves an earlier one between splits);
- every reference against ALL its tests in the real sandbox (`Sandbox.run_many`).

    .venv/bin/python scripts/check_natural.py            # check everything
    .venv/bin/python scripts/check_natural.py --build    # rewrite problems.jsonl, then check
    .venv/bin/python scripts/check_natural.py --sources DIR --out FILE --build   # a draft batch alone
    .venv/bin/python scripts/check_natural.py --set heldout --build \
        --sources examples/heldout/src --out examples/heldout/problems.jsonl   # another set in this format
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from assistant.problems.natural import (
    NATURAL_FILE,
    SOURCE,
    SOURCE_DIR,
    Source,
    grade_references,
    read_cohorts,
    read_sources,
    schema_problems,
)
from assistant.problems.schema import Problem, ProblemError
from assistant.problems.sources import parse_jsonl
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
    record["source"] = src.id.split("/", 1)[0]  # the set's name: natural, or heldout
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
    parser.add_argument("--sources", type=Path, default=SOURCE_DIR, help="the source YAML directory")
    parser.add_argument("--out", type=Path, default=NATURAL_FILE, help="the problems JSONL built from them")
    parser.add_argument(
        "--set",
        default=SOURCE,
        dest="set_name",
        help="the set's name: ids <set>/<slug>, source <set>",
    )
    args = parser.parse_args(argv)
    sources = read_sources(args.sources, args.set_name)
    built = build(sources)
    if args.build:
        args.out.write_text(built, encoding="utf-8")
        print(f"wrote {args.out} ({len(sources)} problems)")
    bad: dict[str, list[str]] = {}
    text = args.out.read_text(encoding="utf-8") if args.out.is_file() else ""
    if text != built:
        bad.setdefault(args.out.name, []).append("is not what the sources build: run with --build")
    problems = parse_jsonl(built, str(args.out))
    if args.sources == SOURCE_DIR:
        try:
            read_cohorts()
        except ProblemError as exc:
            bad.setdefault("cohorts.yaml", []).append(str(exc))
    for pid, why in schema_problems(sources, problems, args.set_name).items():
        bad.setdefault(pid, []).extend(why)
    if not args.no_sandbox:
        box = open_sandbox(load_settings())
        try:
            start = time.monotonic()
            failures = grade_references(box, sources, problems)
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
