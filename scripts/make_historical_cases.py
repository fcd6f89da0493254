"""Build examples/historical: real bugs that libraries fixed in a release, as `cobalt bench debug` cases.

Each case (listed in scripts/historical_sources.py) is one bug fix taken from two consecutive PyPI
source distributions of a small pure-Python library: version N had the bug, version N+1 fixed it in
a few lines of one function and shipped a regression test. The case's project is the library at N+1
(its package, the test files that hold the regression test, its license, a two-line pyproject.toml),
`search` is the fixed text of N+1 and `replace` the text as N had it, so applying the case puts the
real bug back.

For every case the script downloads both sdists with pip (`pip download --no-deps --no-binary :all:`,
into --cache or a temporary directory), checks that `search` occurs exactly once in N+1's module and
not in N's, and that `replace` occurs in N's module; it then packs each project with
`bench.debug_cases.pack` into examples/historical/projects/<library>-<version>.tar.gz and writes
examples/historical/cases.jsonl. Only this build needs the network; the benchmark never downloads.

    .venv/bin/python scripts/make_historical_cases.py                    # build everything
    .venv/bin/python scripts/make_historical_cases.py --cache /tmp/sdists  # keep the downloads

Validate the result in the sandbox with
    .venv/bin/python scripts/make_debug_cases.py --cases examples/historical/cases.jsonl -j 1 --lines 80,1500
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from historical_sources import SPECS, Project, Spec  # noqa: E402  (beside this script)

from bench.debug_cases import pack  # noqa: E402

OUT = ROOT / "examples" / "historical"


# --- building -------------------------------------------------------------------------------------


def fetch(library: str, version: str, cache: Path) -> Path:
    """The extracted sdist of library==version (downloaded into `cache` once)."""
    root = cache / "src" / f"{library}-{version}"
    if root.is_dir():
        return root
    downloads = cache / "downloads" / f"{library}-{version}"
    if not downloads.is_dir() or not any(downloads.iterdir()):
        downloads.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:"]
        subprocess.run([*command, f"{library}=={version}", "-d", str(downloads)], check=True)
    (archive,) = [p for p in downloads.iterdir() if p.name.endswith((".tar.gz", ".zip"))]
    tmp = Path(tempfile.mkdtemp(dir=cache))
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            z.extractall(tmp)
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
    (top,) = list(tmp.iterdir())
    root.parent.mkdir(parents=True, exist_ok=True)
    top.rename(root)
    tmp.rmdir()
    return root


def trim_file(path: Path, names: list[str]) -> None:
    """Delete whole tests or fixtures (`name` at the top level, `Class.name` in a class) and exact
    import lines from a test file."""
    text = path.read_text(encoding="utf-8")
    source = text.splitlines(keepends=True)
    doomed: set[int] = set()
    found: set[str] = set()

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if prefix + node.name in names:
                    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                    doomed.update(range(first - 1, node.end_lineno or node.lineno))
                    found.add(prefix + node.name)
                elif isinstance(node, ast.ClassDef) and not prefix:
                    visit(node.body, node.name + ".")

    visit(ast.parse(text).body, "")
    for number, line in enumerate(source):
        if line.strip() in names and line.startswith(("import ", "from ")):
            doomed.add(number)
            found.add(line.strip())
    if found != set(names):
        raise SystemExit(f"{path}: nothing to trim for {sorted(set(names) - found)}")
    path.write_text("".join(line for n, line in enumerate(source) if n not in doomed), encoding="utf-8")


def build_project(project: Project, sdist: Path, into: Path) -> Path:
    root = into / project.name
    for src, dst in project.copy:
        origin, target = sdist / src, root / dst
        target.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_dir():
            shutil.copytree(origin, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copyfile(origin, target)
    for name, names in project.trim.items():
        trim_file(root / name, names)
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "{project.library}"\nversion = "{project.version}"\n', encoding="utf-8"
    )
    for path in root.rglob("*"):  # the archive keeps modes: make them independent of umask and extraction
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


def check(spec: Spec, new: Path, old: Path) -> list[str]:
    """Why the spec's search/replace pair is not what the two releases hold (empty: it is)."""
    problems = []
    fixed = (new / spec.source).read_text(encoding="utf-8")
    buggy = (old / spec.source).read_text(encoding="utf-8")
    if fixed.count(spec.search) != 1:
        problems.append(f"search occurs {fixed.count(spec.search)} times in {spec.project.version}'s module")
    if spec.search in buggy:
        problems.append(f"search already occurs in {spec.old}'s module")
    if spec.replace not in buggy:
        problems.append(f"replace does not occur in {spec.old}'s module")
    missing = [t for t in spec.tests if t not in {dst for _, dst in spec.project.copy}]
    if missing:
        problems.append(f"test files {missing} are not in the project")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, help="keep the downloaded sdists here (default: a temporary folder)")
    parser.add_argument("--out", type=Path, default=OUT, help="the set's folder (default: %(default)s)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="historical-") as tmp:
        cache = args.cache or Path(tmp) / "cache"
        cache.mkdir(parents=True, exist_ok=True)
        problems = []
        for spec in SPECS:
            new = fetch(spec.project.library, spec.project.version, cache)
            old = fetch(spec.project.library, spec.old, cache)
            problems += [f"{spec.id}: {p}" for p in check(spec, new, old)]
        ids = [s.id for s in SPECS]
        if len(set(ids)) != len(ids):
            problems.append("duplicate case ids")
        if problems:
            print("\n".join(problems), file=sys.stderr)
            return 1

        projects = {s.project.name: s.project for s in SPECS}
        out_projects = args.out / "projects"
        if out_projects.is_dir():
            for stale in out_projects.glob("*.tar.gz"):
                stale.unlink()
        for name, project in sorted(projects.items()):
            root = build_project(project, fetch(project.library, project.version, cache), Path(tmp) / "build")
            archive = pack(root, out_projects / f"{name}.tar.gz")
            shown = archive.relative_to(ROOT) if archive.is_relative_to(ROOT) else archive
            print(f"{shown}: {archive.stat().st_size} bytes")
        cases = "".join(json.dumps(s.case()) + "\n" for s in SPECS)
        (args.out / "cases.jsonl").write_text(cases, encoding="utf-8")
        libraries = {s.project.library for s in SPECS}
        print(f"{len(SPECS)} cases from {len(projects)} projects of {len(libraries)} libraries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
