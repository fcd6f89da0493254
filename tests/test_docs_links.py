"""The documents hold together: every relative link of every tracked Markdown file points at a file
or directory that exists (the file part of `path#anchor`; anchors are not checked), and the
top-level README stays a manual: at most 25,000 bytes, its first code block the two commands
`make run` and `make test`. Links inside code (fenced blocks, `inline code`) are not links."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parents[1]
README_LIMIT = 25_000

INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'(][^)]*)?\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def markdown_files() -> list[Path]:
    """The repository's tracked `*.md` files (every `*.md` under the root when git is not there)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        names = [n for n in out.split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.md")]
    skip = (".venv", ".git", "node_modules")
    return sorted(ROOT / n for n in names if n.split("/")[0] not in skip and (ROOT / n).is_file())


def relative_links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every relative link outside code: inline `[text](target)`,
    images and reference definitions; web addresses, mail links and same-page anchors left out."""
    found: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        opened = FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        prose = CODE_SPAN.sub("", line)
        targets = [m.group(1) for m in INLINE_LINK.finditer(prose)]
        reference = REFERENCE_LINK.match(prose)
        if reference:
            targets.append(reference.group(1))
        for target in targets:
            if target.startswith("#") or target.startswith("/") or SCHEME.match(target):
                continue
            found.append((number, target))
    return found


def broken_links(md: Path) -> list[str]:
    """`file:line: target` for every relative link of `md` whose file part does not exist."""
    broken = []
    for number, target in relative_links(md.read_text(encoding="utf-8")):
        path = unquote(target.split("#", 1)[0].split("?", 1)[0])
        if path and not (md.parent / path).exists():
            name = md.relative_to(ROOT) if md.is_relative_to(ROOT) else md
            broken.append(f"{name}:{number}: {target}")
    return broken


def test_every_relative_link_resolves() -> None:
    files = markdown_files()
    assert ROOT / "README.md" in files
    broken = [b for md in files for b in broken_links(md)]
    assert not broken, f"{len(broken)} broken relative link(s) in Markdown files:\n" + "\n".join(broken)


def test_the_checker_finds_a_broken_link(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("x")
    (tmp_path / "dir").mkdir()
    md = tmp_path / "page.md"
    md.write_text(
        "[ok](there.md#part) [dir](dir/) [web](https://example.org/x) [anchor](#top) ![img](missing.png)\n"
        "`[code](not-a-link.md)`\n"
        "```\n[fenced](not-a-link-either.md)\n```\n"
        "[gone](nowhere/file.md#a) [space](there%2Emd)\n"
        "[ref]: also-missing.md\n"
    )
    assert broken_links(md) == [
        f"{md}:1: missing.png",
        f"{md}:6: nowhere/file.md#a",
        f"{md}:7: also-missing.md",
    ]


def test_readme_is_a_short_manual_that_starts_with_the_two_commands() -> None:
    readme = ROOT / "README.md"
    size = readme.stat().st_size
    assert size <= README_LIMIT, f"README.md is {size} bytes, over {README_LIMIT}: records go to docs/experiments/"
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", readme.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)
    assert blocks, "README.md has no code block"
    commands = [line.split("#", 1)[0].strip() for line in blocks[0].splitlines() if line.strip()]
    assert commands[:2] == ["make run", "make test"], f"README's first code block starts with {commands[:2]}"
