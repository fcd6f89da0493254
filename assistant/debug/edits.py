"""Edits as answers, one registry of edit formats (`FORMATS`): a reply changes a file by (a) whole
function or method definitions that replace the ones of the same name (`functions`; asked for
after a short trace of the failure in `functions_traced`), (b)
SEARCH/REPLACE blocks matched exactly, then with indentation and trailing blanks ignored
(`search_replace`, aider's format), or (c) is the whole file (`whole_file`: no edit to apply, the
reply's program is the file, answered in the plain loop session). The edited file must parse; an
edit that does not apply or does not parse is returned as a one-sentence error that the loop sends
back as feedback with the current code, never raised.
"""

from __future__ import annotations

import ast
import io
import re
import textwrap
import tokenize
from dataclasses import dataclass, field
from typing import Callable

from assistant.debug.line_marks import unmark
from assistant.debug.localize import spans
from assistant.messages import extract
from sandbox import pyast
from sandbox.pyast import source_lines

FUNCTIONS, SEARCH_REPLACE, WHOLE_FILE = "functions", "search_replace", "whole_file"
FUNCTIONS_TRACED = "functions_traced"
BLOCK = re.compile(
    r"^<{5,9} ?SEARCH[^\n]*\n(?P<search>.*?)^={5,9}[ \t]*\n(?P<replace>.*?)^>{5,9} ?REPLACE[^\n]*$",
    re.MULTILINE | re.DOTALL,
)


@dataclass
class EditResult:
    source: str | None  # the edited file, or None when the edit failed
    error: str | None = None
    changed: list[str] = field(default_factory=list)  # what was replaced or added


def syntax_error(source: str) -> str | None:
    """Where and why `source` does not parse ('line 3: expected ':''), or None when it does."""
    try:
        pyast.parse(source)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    return None


def _finish(source: str, changed: list[str]) -> EditResult:
    problem = syntax_error(source)
    if problem is not None:
        return EditResult(None, f"the edited file does not parse ({problem})")
    return EditResult(source, None, changed)


def _inside_strings(code: str) -> set[int]:
    """The 0-based indices of the lines of `code` that begin inside a string literal (the later
    lines of a triple-quoted string): their text, leading spaces included, is the string's."""
    kinds = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    inside: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type in kinds and token.end[0] > token.start[0]:
                inside.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        pass
    return inside


def _indented(code: str, indent: str) -> list[str]:
    """`code` moved as a block to `indent`; the lines inside its multi-line strings stay as they
    are (shifting them would change the string, and a string line at column 0 would otherwise
    leave nothing to dedent, nesting the whole definition one level deeper)."""
    body = source_lines(code.strip("\n"))
    inside = _inside_strings("\n".join(body))
    code_lines = [line for i, line in enumerate(body) if i not in inside and line.strip()]
    cut = min((len(line) - len(line.lstrip()) for line in code_lines), default=0)
    out = []
    for i, line in enumerate(body):
        if i in inside:
            out.append(line + "\n")
        else:
            out.append((indent + line[cut:] if line.strip() else "") + "\n")
    return out


def _segment(reply_code: str, node: ast.AST) -> str:
    lines = source_lines(reply_code)  # numbered as `ast` numbers them
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])  # type: ignore[attr-defined]
    return "\n".join(lines[start - 1 : node.end_lineno])  # type: ignore[attr-defined]


def _after_imports(source: str) -> int:
    """The line index after the module's last top-level import (0 when none or unparsable)."""
    try:
        body = pyast.parse(source).body
    except SyntaxError:
        return 0
    return max((n.end_lineno or 0 for n in body if isinstance(n, (ast.Import, ast.ImportFrom))), default=0)


def _main_guard(source: str) -> int | None:
    """The line index of the module's top-level `if __name__ == "__main__":`, if it has one."""
    try:
        body = pyast.parse(source).body
    except SyntaxError:
        return None
    for node in body:
        test = getattr(node, "test", None)
        if isinstance(node, ast.If) and isinstance(test, ast.Compare) and isinstance(test.left, ast.Name):
            if test.left.id == "__name__":
                return node.lineno - 1
    return None


DOTTED_DEF = re.compile(r"^(?P<head>(?:async\s+)?def\s+)(?P<owner>[A-Za-z_]\w*)\.(?P<name>[A-Za-z_]\w*)(?=\s*\()")


def _dotted_defs(code: str) -> tuple[str, dict[int, str]]:
    """`def Class.method(...)` at the top level (how a small model writes a method it was named by
    its qualified name) as `def method(...)`, with its owner by line number."""
    owners: dict[int, str] = {}
    lines = source_lines(code)  # a form feed in a string is not a line break
    for number, line in enumerate(lines, 1):
        match = DOTTED_DEF.match(line)
        if match:
            owners[number] = match["owner"]
            lines[number - 1] = match["head"] + match["name"] + line[match.end() :]
    return "\n".join(lines), owners


def _placeholder(node: ast.AST) -> bool:
    """A definition whose body is only `...` (and maybe a docstring): the outline's stand-in."""
    body = [n for n in getattr(node, "body", []) if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    consts = [n for n in getattr(node, "body", []) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)]
    return not body and any(n.value.value is Ellipsis for n in consts)  # type: ignore[attr-defined]


def apply_functions(source: str, reply: str, focus: tuple[str, ...] = ()) -> EditResult:
    """Replace each function or method the reply defines; add new ones and missing imports. A bare
    `def name(` that several methods share goes to the one of them in `focus` (the functions the
    prompt showed in full), if any."""
    code = "\n\n".join(extract.python_blocks(reply)) or None
    if code is None:
        return EditResult(None, "the reply holds no ```python block with the changed functions")
    code, owners = _dotted_defs(textwrap.dedent(code))
    try:
        tree = pyast.parse(code)
    except SyntaxError as exc:
        return EditResult(None, f"the reply's code does not parse (line {exc.lineno}: {exc.msg})")
    lines = source_lines(source, keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    existing = spans(source)
    replacements: list[tuple[int, int, list[str], str]] = []  # (start, end, new lines, name), 1-based inclusive
    appended: list[str] = []
    unchanged: list[str] = []  # functions the reply repeats as they are
    ambiguous: list[str] = []  # a name several definitions share that the reply's decorators do not tell apart
    imports: list[str] = []

    def indent_of(line_no: int) -> str:
        text = lines[line_no - 1]
        return text[: len(text) - len(text.lstrip())]

    def place(name: str, owner: str | None, segment: str, node: ast.AST) -> None:
        if _placeholder(node):
            return  # a `...` body copied from the outline, not a change
        candidates = [s for s in existing if s.name == name and s.kind != "class"]
        if owner is not None:
            candidates = [s for s in candidates if s.qualname == f"{owner}.{name}"]
        elif len(candidates) > 1:
            focused = [s for s in candidates if s.qualname in focus]  # a bare `def read(self` of the shown method
            shown = [s for s in focused if s.qualname == focused[0].qualname]  # a getter and setter: both
            args = getattr(node, "args", None)
            first = args.args[0].arg if args is not None and args.args else ""
            method = first in ("self", "cls")  # a bare `def render(self` is a method, not the module's `render`
            of_kind = [s for s in candidates if (s.kind == "method") == method]
            candidates = shown or of_kind or candidates
        decorators = tuple(ast.unparse(d) for d in getattr(node, "decorator_list", []))
        if len({s.qualname for s in candidates}) == 1 and len(candidates) > 1:  # a getter and its setter, ...
            candidates = [s for s in candidates if s.decorators == decorators]
            if len(candidates) != 1:
                ambiguous.append(f"{owner + '.' if owner else ''}{name}")
                return
        if len(candidates) == 1:
            span = candidates[0]
            start = span.start
            if not decorators and span.def_line > span.start:
                start = span.def_line  # the reply gave the def without its decorators: they stay
            if textwrap.dedent("".join(lines[start - 1 : span.end])).strip() == textwrap.dedent(segment).strip():
                unchanged.append(span.qualname)
                return  # repeated unchanged
            replacements.append((start, span.end, _indented(segment, indent_of(start)), span.qualname))
        elif owner is None:
            appended.append(segment)
        else:
            cls = next((s for s in existing if s.qualname == owner), None)
            if cls is None:
                appended.append(segment)
            else:
                replacements.append((cls.end + 1, cls.end, ["\n"] + _indented(segment, "    "), f"{owner}.{name}"))

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            place(node.name, owners.get(node.lineno), _segment(code, node), node)
        elif isinstance(node, ast.ClassDef):
            if not any(s.qualname == node.name for s in existing):
                appended.append(_segment(code, node))
                continue
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    place(sub.name, node.name, _segment(code, sub), sub)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            line = ast.unparse(node)
            if line not in {ln.strip() for ln in lines}:
                imports.append(line + "\n")
    if ambiguous:
        return EditResult(
            None,
            f"the file defines {', '.join(f'`{n}`' for n in ambiguous)} more than once (a getter and its "
            "setter, overloads); give each with its decorators as the file has them",
        )
    if not replacements:
        why = ""
        if unchanged:
            why = f" (it repeats {', '.join(f'`{n}`' for n in unchanged)} unchanged)"
        elif appended:
            added = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
            why = f" (it only adds {', '.join(f'`{n}`' for n in added)}; fix the code that is there)"
        return EditResult(None, f"the reply changes no function or method of the file{why}")
    texts: dict[tuple[int, str], set[str]] = {}  # by target (its last line, its name): with or without decorators
    for _, end, new, name in replacements:
        texts.setdefault((end, name), set()).add("".join(new))
    if any(len(t) > 1 for t in texts.values()):
        return EditResult(None, "the reply defines the same function twice, differently")
    replacements = list({(r[1], r[3]): r for r in replacements}.values())  # the same one twice: once
    names = [name for *_, name in replacements]
    for start, end, new, _ in sorted(replacements, key=lambda r: r[0], reverse=True):
        lines[start - 1 : end] = new
    at = _main_guard("".join(lines))
    for segment in appended:  # new definitions before `if __name__ == "__main__":`, which runs at import's end
        block = ["\n", "\n"] + _indented(segment, "")
        if at is None:
            lines += block
        else:
            lines[at:at] = block[2:] + ["\n", "\n"]
            at += len(block)
    if imports:
        at = _after_imports("".join(lines))
        lines[at:at] = imports
    return _finish("".join(lines), names + [f"added {len(appended)} definition(s)"] * bool(appended))


def _loose_find(lines: list[str], search: list[str]) -> list[int]:
    """Start indices where `search` matches `lines` ignoring indentation and trailing blanks."""
    want = [s.strip() for s in search]
    return [i for i in range(len(lines) - len(want) + 1) if [ln.strip() for ln in lines[i : i + len(want)]] == want]


def _reindent(replace: list[str], search_first: str, found_first: str) -> list[str]:
    have = found_first[: len(found_first) - len(found_first.lstrip())]
    gave = search_first[: len(search_first) - len(search_first.lstrip())]
    out = []
    for line in replace:
        body = line[len(gave) :] if line.startswith(gave) else line.lstrip()
        out.append(have + body if line.strip() else "\n")
    return out


def apply_search_replace(source: str, reply: str) -> EditResult:
    """Apply every SEARCH/REPLACE block in order; each SEARCH must match exactly one place."""
    found = list(BLOCK.finditer(reply))
    if not found:
        return EditResult(None, "the reply holds no SEARCH/REPLACE block")
    changed = []
    for number, block in enumerate(found, 1):
        search, replace = block["search"], block["replace"]
        if not search.strip():
            return EditResult(None, f"SEARCH/REPLACE block {number} has an empty SEARCH part")
        count = source.count(search)
        if count == 1:
            source = source.replace(search, replace, 1)
        elif count > 1:
            return EditResult(None, f"the SEARCH part of block {number} matches {count} places; include more lines")
        else:
            lines = source_lines(source, keepends=True)
            wanted = source_lines(search, keepends=True)
            while wanted and not wanted[-1].strip():
                wanted.pop()
            starts = _loose_find(lines, wanted)
            if len(starts) != 1:
                return EditResult(None, f"the SEARCH part of block {number} does not match the current code")
            at = starts[0]
            new = _reindent(source_lines(replace, keepends=True), wanted[0], lines[at])
            lines[at : at + len(wanted)] = [ln if ln.endswith("\n") else ln + "\n" for ln in new]
            source = "".join(lines)
        changed.append(f"block {number}")
    return _finish(source, changed)


@dataclass(frozen=True)
class EditFormat:
    """How a reply changes the file: `apply(source, reply, focus)` edits the file as it stands;
    None for a reply that is the whole file (no debug session: the plain loop takes its program)."""

    name: str
    apply: Callable[[str, str, tuple[str, ...]], EditResult] | None
    prose_tokens: int = 64  # what a reply may write beside its code (configs/prompts.yaml debug_formats)

    @property
    def edits(self) -> bool:
        return self.apply is not None

    @property
    def whole_functions(self) -> bool:
        """Whether the reply's code is whole functions, placed by the file's syntax tree."""
        return self.apply is apply_functions


FORMATS: dict[str, EditFormat] = {
    f.name: f
    for f in (
        EditFormat(FUNCTIONS, apply_functions),
        EditFormat(FUNCTIONS_TRACED, apply_functions, prose_tokens=256),
        EditFormat(SEARCH_REPLACE, lambda source, reply, _focus: apply_search_replace(source, reply)),
        EditFormat(WHOLE_FILE, None),
    )
}


def edit_format(name: str) -> EditFormat:
    """The registered format `name`; a one-sentence error naming the formats otherwise."""
    if name not in FORMATS:
        raise ValueError(f"unknown edit format {name!r}; one of: {', '.join(FORMATS)}")
    return FORMATS[name]


def apply_reply(source: str, reply: str, name: str, focus: tuple[str, ...] = ()) -> EditResult:
    """The file after the reply's edit, in the edit format `name` (`focus`: see `apply_functions`);
    the prompt's line marks the reply copied are taken out first."""
    apply = edit_format(name).apply
    if apply is None:
        raise ValueError(f"the {name} format has no edit to apply: the reply is the file")
    return apply(source, unmark(reply), focus)
