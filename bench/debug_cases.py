"""The cases of `cobalt bench debug` (examples/debug): one injected bug per case in a module of a
real library, with that library's own tests. Each library's project (its package, its test files,
its LICENSE) is kept as `examples/debug/projects/<name>.tar.gz`, third-party code that is data
here, not part of Cobalt; a case is applied by replacing its `search` text, which occurs exactly
once in the module, with `replace`.
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from dataclasses import dataclass
from pathlib import Path

from assistant.errors import UserError

DEBUG_DIR = Path(__file__).resolve().parents[1] / "examples" / "debug"
CASES = DEBUG_DIR / "cases.jsonl"
PROJECTS = DEBUG_DIR / "projects"


@dataclass
class Case:
    id: str
    project: str
    target_file: str
    test_command: str
    function: str
    search: str
    replace: str
    bug: str
    projects: Path = PROJECTS  # the folder of the project archives: `projects/` beside the cases file

    def archive(self, projects: Path | None = None) -> Path:
        return (projects or self.projects) / f"{self.project}.tar.gz"

    def original(self, projects: Path | None = None) -> str:
        """The module as the library ships it."""
        with tarfile.open(self.archive(projects)) as tar:
            member = tar.extractfile(f"{self.project}/{self.target_file}")
            if member is None:
                raise UserError(f"case {self.id}: {self.target_file} is not in {self.archive(projects).name}")
            return io.TextIOWrapper(member, encoding="utf-8").read()

    def buggy(self, projects: Path | None = None) -> str:
        """The module with the case's bug; UserError unless `search` occurs exactly once."""
        text = self.original(projects)
        if text.count(self.search) != 1:
            raise UserError(f"case {self.id}: its search text does not occur exactly once in {self.target_file}")
        return text.replace(self.search, self.replace, 1)

    def bug_lines(self, projects: Path | None = None) -> range:
        """The lines of the buggy module where `replace` differs from `search` (the lines they share
        at either end left out); for a bug that only removed lines, the line where they were."""
        old, new = self.search.splitlines(), self.replace.splitlines()
        head = 0
        while head < min(len(old), len(new)) and old[head] == new[head]:
            head += 1
        tail = 0
        while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
            tail += 1
        start = self.original(projects).split(self.search, 1)[0].count("\n") + 1 + head
        return range(start, start + max(1, len(new) - head - tail))

    def unpack(self, into: Path, projects: Path | None = None, buggy: bool = True) -> Path:
        """A fresh copy of the project under `into`, with the bug applied unless `buggy` is False."""
        with tarfile.open(self.archive(projects)) as tar:
            tar.extractall(into, filter="data")
        root = into / self.project
        if buggy:
            (root / self.target_file).write_text(self.buggy(projects), encoding="utf-8")
        return root


def read_cases(path: Path = CASES, limit: int = 0) -> list[Case]:
    """The cases of a JSONL file (the first `limit` of them; 0: all)."""
    if not path.is_file():
        raise UserError(f"no cases file at {path}")
    cases = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            cases.append(Case(**json.loads(line), projects=path.parent / "projects"))
        except (ValueError, TypeError) as exc:  # not JSON, not an object, a field missing or unknown
            raise UserError(f"{path}:{number}: not a debug case ({exc})") from None
    return cases[:limit] if limit else cases


def pack(project_dir: Path, out: Path) -> Path:
    """`project_dir` as a reproducible tar.gz (sorted, no owners, no times), without caches."""
    out.parent.mkdir(parents=True, exist_ok=True)
    files = sorted(p for p in project_dir.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    with gzip.GzipFile(out, "wb", compresslevel=9, mtime=0) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        for path in files:
            info = tar.gettarinfo(str(path), arcname=f"{project_dir.name}/{path.relative_to(project_dir)}")
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 0
            with open(path, "rb") as fh:
                tar.addfile(info, fh)
    return out
