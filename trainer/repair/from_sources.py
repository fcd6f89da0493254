"""Repair items of a problem set that carries reference solutions: a directory in the natural
set's layout (`problems.jsonl` built by scripts/check_natural.py, and `src/*.yaml` holding each
problem's reference), such as examples/natural/ or examples/heldout/.

`cobalt dataset mutants DIR --out FILE.jsonl` pairs every problem with its reference, keeps the
seeded mutants of the reference that fail a public test while the reference passes every test
(`trainer.repair.items.build_items`, configs/repair.yaml `mutate:`), and writes them as a
`repair:FILE.jsonl` benchmark. So bugs on problems no adapter was tuned on can be made in one
command. The references are our own code; only the sandbox runs them.
"""

from __future__ import annotations

from pathlib import Path

from assistant.interfaces import Rule
from assistant.problems.natural import read_sources
from assistant.problems.schema import Problem, ProblemError
from assistant.problems.sources import parse_jsonl
from assistant.problems.splits import select


def reference_pairs(directory: Path) -> list[tuple[Problem, str]]:
    """(problem, its reference) for every problem of `directory/problems.jsonl`, in file order;
    ProblemError (one sentence) when the directory is not such a set or a problem has no reference."""
    problems_file, sources_dir = directory / "problems.jsonl", directory / "src"
    if not problems_file.is_file() or not sources_dir.is_dir():
        raise ProblemError(f"{directory}: not a problem set with references (it needs problems.jsonl and src/*.yaml)")
    problems = parse_jsonl(problems_file.read_text(encoding="utf-8"), str(problems_file))
    if not problems:
        raise ProblemError(f"{problems_file}: the file holds no problems")
    names = {p.id.split("/", 1)[0] for p in problems}
    if len(names) != 1 or not all("/" in p.id for p in problems):
        raise ProblemError(f"{problems_file}: ids must all be <set>/<slug> with one set name, found {sorted(names)}")
    references = {s.id: s.reference for s in read_sources(sources_dir, names.pop())}
    missing = [p.id for p in problems if not references.get(p.id, "").strip()]
    if missing:
        raise ProblemError(
            f"{sources_dir}: no reference for {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}"
        )
    return [(p, references[p.id]) for p in problems]


def split_pairs(pairs: list[tuple[Problem, str]], split: str, rule: Rule) -> list[tuple[Problem, str]]:
    """The (problem, reference) pairs whose problem is in `split` (the `eval:` split rule, as
    `cobalt eval` selects them), in their order."""
    keep = {p.id for p in select([p for p, _ in pairs], split, rule)}
    return [(p, ref) for p, ref in pairs if p.id in keep]
