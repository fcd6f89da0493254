"""Small pytest projects on disk for the debug tests: a pyproject.toml marking the root, the
module under repair and its tests."""

from __future__ import annotations

from pathlib import Path

CALC_TESTS = (
    "from calc import mul\n\ndef test_mul():\n    assert mul(2, 3) == 6\n\n"
    "def test_unit():\n    assert mul(1, 1) == 1\n"
)


def write_project(root: Path, files: dict[str, str]) -> Path:
    """`root` with a pyproject.toml and `files` (relative path -> text); returns `root`."""
    for name, text in {"pyproject.toml": f"[project]\nname = '{root.name}'\n", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def calc_project(root: Path, module: str, tests: str = CALC_TESTS) -> Path:
    """A project whose `calc.py` holds `module`, tested by tests/test_calc.py."""
    return write_project(root, {"calc.py": module, "tests/test_calc.py": tests})


MUL_WRONG = "def mul(a, b):\n    return a - b"
MUL_FIXED = "def mul(a, b):\n    return a * b"
CRASHING = "def ratio(a, b):\n    return a / b\n\n\ndef mean(xs):\n    return ratio(sum(xs), len(xs) - len(xs))\n"
MEAN_FIXED = "def mean(xs):\n    return ratio(sum(xs), len(xs))"
STATS_TESTS = (
    "from pkg.stats import mean, ratio\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n\n"
    "def test_ratio():\n    assert ratio(6, 3) == 2\n"
)
DOUBLE = "def mul(a, b):\n    return a + b\n\n\ndef double(a):\n    return mul(a, 2)\n"
DOUBLE_TESTS = (
    "from calc import double, mul\n\ndef test_mul():\n    assert mul(2, 3) == 6\n\n"
    "def test_double():\n    assert double(4) == 8\n\ndef test_zero():\n    assert mul(0, 0) == 0\n"
)


def stats_project(root: Path) -> Path:
    """A package project whose `mean` crashes inside the module (a frame points at it)."""
    return write_project(root, {"pkg/__init__.py": "", "pkg/stats.py": CRASHING, "tests/test_stats.py": STATS_TESTS})


def commit_all(root: Path) -> None:
    """Make `root` a git repository with everything in it committed (so a later edit is dirty)."""
    import subprocess

    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=root, check=True)
