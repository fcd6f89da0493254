"""The house rules of the code base (docs/architecture.md), checked on the source tree:
the layers, no import cycle, our own imports at the top of each module, benchmarks only in
`bench/`, a small `assistant/` top level, one name per module, one settings style, and no
pointer to a document outside the repository."""

from __future__ import annotations

import ast
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("sandbox", "assistant", "trainer", "bench")  # lowest layer first
# A module may be imported inside a function only when it pulls a heavy third-party library
# that a command line must not pay for before it runs: the TUI is built on Textual.
LAZY_ALLOWED = {("assistant.cli.tui_cmd", "assistant.tui")}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(REPO.glob("*/**/*.py")):
        rel = path.relative_to(REPO)
        if rel.parts[0] not in PACKAGES or "harness" in rel.parts:  # the harness runs inside the image
            continue
        out[".".join(rel.with_suffix("").parts).removesuffix(".__init__")] = path
    return out


MODULES = _modules()


def _imports(name: str, typing_too: bool = False) -> tuple[set[str], set[str]]:
    """(imported at the top, imported inside a function) of our modules, TYPE_CHECKING aside
    unless `typing_too`; importing `a.b.c` also imports the packages `a` and `a.b`."""
    tree = ast.parse(MODULES[name].read_text())
    top: set[str] = set()
    lazy: set[str] = set()

    def targets(node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        base = node.module or ""
        if node.level:
            package = name.split(".") if MODULES[name].name == "__init__.py" else name.split(".")[:-1]
            base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
        return [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test) and not typing_too:
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for target in targets(child):
                    if target.split(".")[0] in PACKAGES:
                        (lazy if in_function else top).add(target)
            else:
                walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    walk(tree, False)

    def with_parents(found: set[str]) -> set[str]:
        out = set(found)
        for target in found:
            parts = target.split(".")
            out |= {".".join(parts[:i]) for i in range(1, len(parts))}
        return {t for t in out if t in MODULES and t != name and not name.startswith(t + ".")}

    return with_parents(top), with_parents(lazy)


IMPORTS = {name: _imports(name) for name in MODULES}
TYPED_IMPORTS = {name: _imports(name, typing_too=True) for name in MODULES}

# The order inside a package, lowest first: a module imports only its own group or lower ones.
# A group is a module or a package prefix; `*_settings` modules are settings sections owned by
# their package and ranked with the settings they compose.
INNER_ORDER = {
    "assistant": [
        ("assistant", "assistant.errors", "assistant.console"),
        ("assistant.config_files",),
        ("assistant.messages",),
        ("assistant.settings", "assistant.settings_loader", "*_settings"),
        ("assistant.interfaces",),
        ("assistant.problems",),
        ("assistant.store",),
        ("assistant.serving",),
        ("assistant.loop",),
        ("assistant.debug",),
        ("assistant.runtime",),
        ("assistant.tui",),
        ("assistant.cli",),
    ],
    "sandbox": [
        ("sandbox.pyast", "sandbox.harness", "sandbox.api"),
        ("sandbox.checks", "sandbox.flags"),
        ("sandbox.canary",),
        ("sandbox.prepared",),
        ("sandbox.grading",),
        ("sandbox.protocol",),
        ("sandbox.image", "sandbox.sandbox_settings"),
        ("sandbox.engine",),
        ("sandbox.transport",),
        ("sandbox.pool",),
        ("sandbox.backend",),
        ("sandbox.ray_backend",),
        ("sandbox.core",),
        ("sandbox",),  # the package's face: re-exports Sandbox and the API
    ],
}


def _rank(name: str) -> int:
    """The group of `name` in its package's INNER_ORDER (the longest matching prefix wins)."""
    best, rank = -1, -1
    for i, group in enumerate(INNER_ORDER[name.split(".")[0]]):
        for prefix in group:
            if prefix == "*_settings" and name.rsplit(".", 1)[-1].endswith("_settings"):
                return i
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    assert rank >= 0, f"{name} has no place in INNER_ORDER"
    return rank


def upward_imports(package: str) -> list[tuple[str, str]]:
    """(importer, imported) pairs inside `package` that point up its INNER_ORDER, type-only
    imports included; a package passed through on the way to a module counts only when its
    `__init__` imports something of ours."""
    pairs = []
    for name, (top, lazy) in TYPED_IMPORTS.items():
        if name.split(".")[0] != package:
            continue
        found = top | lazy
        for target in found:
            through = any(t.startswith(target + ".") for t in found) and not any(TYPED_IMPORTS[target])
            if target.split(".")[0] == package and not through and _rank(target) > _rank(name):
                pairs.append((name, target))
    return sorted(pairs)


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of `graph`, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_layers_point_down_only() -> None:
    for name, (top, lazy) in IMPORTS.items():
        layer = PACKAGES.index(name.split(".")[0])
        above = {t for t in top | lazy if PACKAGES.index(t.split(".")[0]) > layer}
        assert not above, f"{name} imports a higher layer: {sorted(above)}"


def test_no_import_cycle_among_our_modules_even_through_type_only_imports() -> None:
    graph = {name: top | lazy for name, (top, lazy) in TYPED_IMPORTS.items()}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


@pytest.mark.parametrize("package", sorted(INNER_ORDER))
def test_inside_a_package_imports_point_down_its_order(package: str) -> None:
    assert upward_imports(package) == []


def test_the_order_check_sees_an_upward_import() -> None:
    assert _rank("assistant.serving.chat") > _rank("assistant.messages.shapes")
    assert _rank("assistant.debug.search_settings") == _rank("assistant.settings")
    assert _rank("sandbox.protocol") > _rank("sandbox.grading")


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_our_imports_sit_at_the_top_of_each_module() -> None:
    inside = sorted(
        (name, t) for name, (top, lazy) in IMPORTS.items() for t in lazy - top if (name, t) not in LAZY_ALLOWED
    )
    assert not inside, f"imports of our modules inside functions: {inside}"


def test_assistant_has_at_most_eight_modules_at_its_top() -> None:
    assert len(list((REPO / "assistant").glob("*.py"))) <= 8


def test_benchmarks_live_only_in_bench() -> None:
    strays = [
        str(p.relative_to(REPO))
        for pkg in ("assistant", "sandbox", "trainer")
        for p in (REPO / pkg).rglob("*.py")
        if "bench" in p.stem
    ]
    assert not strays


def test_no_two_modules_share_a_file_name() -> None:
    names = Counter(p.name for p in MODULES.values() if p.name not in ("__init__.py", "__main__.py"))
    assert [n for n, k in names.items() if k > 1] == []


@pytest.mark.parametrize("name", sorted(n for n in MODULES if "settings" in n.rsplit(".", 1)[-1]))
def test_settings_are_pydantic_models_not_dataclasses(name: str) -> None:
    tree = ast.parse(MODULES[name].read_text())
    assert "dataclass" not in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
    }, name


def test_nothing_points_to_a_document_outside_the_repository() -> None:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    outside = re.compile(r"DESIGN(\.md| §)|\.\./shared|/work/shared")
    hits = []
    for rel in listed:
        path = REPO / rel
        if path == Path(__file__).resolve() or not path.is_file() or path.suffix in (".svg", ".png", ".gz", ".bin"):
            continue
        text = path.read_text(errors="replace")
        hits += [f"{rel}:{i}" for i, line in enumerate(text.splitlines(), 1) if outside.search(line)]
    assert not hits, hits
