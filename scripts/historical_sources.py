"""The sources of examples/historical (scripts/make_historical_cases.py builds the set from
them): each library release used as a project (what is copied out of its sdist, which tests are
deleted and why), and each bug: the fix from release N to N+1, undone (N+1's fixed lines as
`search`, N's as `replace`), with the changelog line that names it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

PYTEST = "python -m pytest -q -p no:cacheprovider"


def lines(*text: str) -> str:
    """The given lines, each ended by a newline (keeps a case's indentation readable)."""
    return "".join(line + "\n" for line in text)


@dataclass
class Project:
    """A library at one release, as the project of its cases."""

    library: str  # the PyPI name
    version: str
    copy: list[tuple[str, str]]  # (path in the sdist, path in the project); folders are copied whole
    # project test file -> whole tests to delete: `name` at the top level, `Class.name` in a class
    trim: dict[str, list[str]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.library}-{self.version}"


@dataclass
class Spec:
    """One historical bug: the fix from `old` to `project`'s version, undone."""

    id: str
    project: Project
    old: str  # version N, which had the bug
    target: str  # the module in the project
    source: str  # the module's path in both sdists
    function: str
    tests: list[str]
    search: str  # N+1's fixed lines
    replace: str  # N's lines
    bug: str

    def case(self) -> dict[str, str]:
        return {
            "id": self.id,
            "project": self.project.name,
            "target_file": self.target,
            "test_command": f"{PYTEST} {' '.join(self.tests)}",
            "function": self.function,
            "search": self.search,
            "replace": self.replace,
            "bug": self.bug,
        }


# --- projects -------------------------------------------------------------------------------------


def _semver(version: str, tests: list[str]) -> Project:
    return Project("semver", version, [("src/semver", "semver"), ("LICENSE.txt", "LICENSE")] + [(t, t) for t in tests])


def _parse(version: str, module: str, tests: list[str], trim: dict[str, list[str]] | None = None) -> Project:
    return Project(
        "parse", version, [(module, module), ("LICENSE", "LICENSE")] + [(t, t) for t in tests], trim=trim or {}
    )


def _sqlparse(version: str, tests: list[str], trim: dict[str, list[str]] | None = None) -> Project:
    files = ["sqlparse", "LICENSE", "tests/__init__.py"] + tests
    return Project("sqlparse", version, [(f, f) for f in files], trim=trim or {})


def _markdown(version: str, tests: list[str]) -> Project:
    # Markdown.egg-info carries the entry points that map extension names ('toc') to classes;
    # importlib.metadata finds it on sys.path (the project root) as it finds an installed package.
    inits = {"tests/__init__.py", "tests/test_syntax/__init__.py"}
    inits |= {str(Path(t).parent / "__init__.py") for t in tests}
    files = ["markdown", "Markdown.egg-info/PKG-INFO", "Markdown.egg-info/entry_points.txt"]
    return Project("markdown", version, [(f, f) for f in files + sorted(inits) + tests] + [("LICENSE.md", "LICENSE")])


SEMVER_302 = _semver("3.0.2", ["tests/test_subclass.py"])
SEMVER_304 = _semver("3.0.4", ["tests/test_subclass.py"])
SEMVER_310 = _semver("3.1.0", ["tests/test_compare_invalid_operands.py"])
SEMVER_311 = _semver("3.1.1", ["tests/test_replace.py", "tests/test_bump_token_validation.py", "tests/test_index.py"])
PARSE_1211 = _parse("1.21.1", "parse.py", ["tests/test_bugs.py"])
# test_too_many_fields is skipped on Python 3.5+ (a skip is not a pass for the benchmark).
PARSE_TRIM = {"tests/test_parse.py": ["test_too_many_fields"]}
PARSE_1221 = _parse("1.22.1", "parse", ["tests/test_parse.py"], PARSE_TRIM)
PARSE_1223 = _parse("1.22.3", "parse", ["tests/test_parse.py"], PARSE_TRIM)
PARSE_1224 = _parse("1.22.4", "parse", ["tests/test_parse.py"], PARSE_TRIM)
# Two tests the library marks xfail("Needs fixing"): they fail in every release.
SQLPARSE_XFAIL = {
    "tests/test_format.py": [
        "TestOutputFormat.test_python_multiple_statements_with_formatting",
        "test_format_right_margin",
    ]
}
SQLPARSE_051 = _sqlparse("0.5.1", ["tests/test_format.py"], SQLPARSE_XFAIL)
SQLPARSE_054 = _sqlparse("0.5.4", ["tests/test_format.py"], SQLPARSE_XFAIL)
SQLPARSE_060 = _sqlparse("0.6.0", ["tests/test_parse.py", "tests/test_grouping.py"])
MD_38 = _markdown("3.8", ["tests/test_syntax/extensions/test_toc.py"])
MD_311 = _markdown("3.11", ["tests/test_syntax/extensions/test_abbr.py"])
MD_3113 = _markdown(
    "3.11.3", ["tests/test_syntax/extensions/test_abbr.py", "tests/test_syntax/extensions/test_code_hilite.py"]
)
PATHSPEC_0121 = Project(
    "pathspec",
    "0.12.1",
    [(f, f) for f in ["pathspec", "LICENSE", "tests/__init__.py", "tests/util.py", "tests/test_03_pathspec.py"]],
)
CACHETOOLS_703 = Project(
    "cachetools",
    "7.0.3",
    [("src/cachetools", "cachetools"), ("LICENSE", "LICENSE")]
    + [(f, f) for f in ["tests/__init__.py", "tests/test_cachedmethod.py"]],
)
PATHSPEC_0111 = Project(
    "pathspec",
    "0.11.1",
    [(f, f) for f in ["pathspec", "LICENSE", "tests/__init__.py", "tests/test_gitignore.py"]],
)
CLICK_841 = Project(
    "click",
    "8.4.1",
    [("src/click", "click"), ("LICENSE.txt", "LICENSE")]
    + [(f, f) for f in ["tests/conftest.py", "tests/test_shell_completion.py"]],
)
# The tests the library skips off Windows (msvcrt input, Windows editor paths) are deleted.
CLICK_842 = Project(
    "click",
    "8.4.2",
    [("src/click", "click"), ("LICENSE.txt", "LICENSE")]
    + [(f, f) for f in ["tests/conftest.py", "tests/test_termui.py"]],
    trim={
        "tests/test_termui.py": [
            "test_getchar_windows",
            "test_getchar_special_key_windows",
            "test_getchar_windows_exceptions",
            "test_editor_windows_path_normalization",
        ]
    },
)

# --- cases ----------------------------------------------------------------------------------------

SPECS = [
    Spec(
        id="semver-1",
        project=SEMVER_302,
        old="3.0.1",
        target="semver/version.py",
        source="src/semver/version.py",
        function="Version.replace",
        tests=["tests/test_subclass.py"],
        search=lines("            return type(self)(**version)  # type: ignore"),
        replace=lines("            return Version(**version)  # type: ignore"),
        bug="semver 3.0.1 -> 3.0.2: 'Fix Version.replace method to use the derived class of an instance "
        "instead of Version class' (PR 426, CHANGELOG.rst).",
    ),
    Spec(
        id="semver-2",
        project=SEMVER_304,
        old="3.0.2",
        target="semver/version.py",
        source="src/semver/version.py",
        function="_comparator.wrapper",
        tests=["tests/test_subclass.py"],
        search=lines("        comparable_types = (", "            type(self),"),
        replace=lines("        comparable_types = (", "            Version,"),
        bug="semver 3.0.2 -> 3.0.4 (3.0.3, never on PyPI, made the fix): 'The check in _comparator does not "
        "match the check in Version.compare. This breaks comparision with subclasses.' (PR 453, CHANGELOG.rst).",
    ),
    Spec(
        id="semver-3",
        project=SEMVER_310,
        old="3.0.4",
        target="semver/version.py",
        source="src/semver/version.py",
        function="_comparator.wrapper",
        tests=["tests/test_compare_invalid_operands.py"],
        search=lines(
            "        if isinstance(other, (dict, tuple, list)):",
            "            # A collection that cannot construct a comparable version is",
            "            # not a valid comparison operand.  Return NotImplemented",
            "            # instead of leaking conversion errors from __init__.",
            "            try:",
            "                other = cls(**other) if isinstance(other, dict) else cls(*other)",
            "            except (TypeError, ValueError):",
            "                return NotImplemented",
            "        return operator(self, other)",
        ),
        replace=lines("        return operator(self, other)"),
        bug="semver 3.0.4 -> 3.1.0: 'Comparing a Version with a dict, tuple, or list that cannot construct a "
        "valid version ... no longer raises internal errors from Version.__init__' (PR 479, CHANGELOG.rst).",
    ),
    Spec(
        id="semver-4",
        project=SEMVER_311,
        old="3.1.0",
        target="semver/version.py",
        source="src/semver/version.py",
        function="Version.replace",
        tests=["tests/test_replace.py"],
        search=lines(
            "            unknownkeys = set(parts) - set(self.to_dict())",
            "            if not unknownkeys:",
            "                raise",
        ),
        replace=lines("            unknownkeys = set(parts) - set(self.to_dict())"),
        bug="semver 3.1.0 -> 3.1.1: 'Version.replace() now preserves the original constructor TypeError when an "
        "existing version component receives an invalid value' (PR 501, CHANGELOG.rst).",
    ),
    Spec(
        id="semver-5",
        project=SEMVER_311,
        old="3.1.0",
        target="semver/version.py",
        source="src/semver/version.py",
        function="Version.bump_build",
        tests=["tests/test_bump_token_validation.py"],
        search=lines(
            "            token = str(token)",
            '            cls._validate_identifiers(token, cls._BUILD_IDENTIFIER, "build token")',
            '            build = token + ".0"',
        ),
        replace=lines('            build = str(token) + ".0"'),
        bug="semver 3.1.0 -> 3.1.1: 'Fix bump_prerelease and bump_build to raise a ValueError when the token "
        "argument is not a valid dot-separated SemVer identifier' (PR 483, CHANGELOG.rst); the bump_build half.",
    ),
    Spec(
        id="semver-6",
        project=SEMVER_311,
        old="3.1.0",
        target="semver/version.py",
        source="src/semver/version.py",
        function="Version.__getitem__",
        tests=["tests/test_index.py"],
        search=lines(
            "        if isinstance(index, slice):",
            "            start = None if index.start is None else operator.index(index.start)",
            "            stop = None if index.stop is None else operator.index(index.stop)",
            "            index = slice(start, stop, index.step)",
            "        else:",
            "            start = operator.index(index)",
            "            stop = start + 1",
            "            index = slice(start, stop)",
            "",
            "        if (start is not None and start < 0) or (stop is not None and stop < 0):",
        ),
        replace=lines(
            "        if isinstance(index, int):",
            "            index = slice(index, index + 1)",
            "        index = cast(slice, index)",
            "",
            "        if (",
            "            isinstance(index, slice)",
            "            and (index.start is not None and index.start < 0)",
            "            or (index.stop is not None and index.stop < 0)",
            "        ):",
        ),
        bug="semver 3.1.0 -> 3.1.1: 'Version subscripts now accept objects implementing __index__ and raise "
        "TypeError for invalid key types' (PR 508, CHANGELOG.rst).",
    ),
    Spec(
        id="parse-1",
        project=PARSE_1211,
        old="1.21.0",
        target="parse.py",
        source="parse.py",
        function="date_convert",
        tests=["tests/test_bugs.py"],
        search=lines('                u = int(u.ljust(6, "0")[:6])'),
        replace=lines('                u = int(float("." + u) * 1000000)'),
        bug="parse 1.21.0 -> 1.21.1: 'Fix microsecond precision loss in timestamp parsing' (README changelog).",
    ),
    Spec(
        id="parse-2",
        project=PARSE_1221,
        old="1.22.0",
        target="parse/__init__.py",
        source="parse/__init__.py",
        function="Parser._handle_field",
        tests=["tests/test_parse.py"],
        search=lines(
            '            # precision 0 formats without a decimal point (e.g. format(20.0, ".0f") == "20")',
            '            s = r"\\d+" if format.get("precision") == "0" else r"\\d*\\.\\d+"',
            "            conv[group] = convert_first(float)",
            '        elif type == "F":',
            '            s = r"\\d+" if format.get("precision") == "0" else r"\\d*\\.\\d+"',
        ),
        replace=lines(
            '            s = r"\\d*\\.\\d+"',
            "            conv[group] = convert_first(float)",
            '        elif type == "F":',
            '            s = r"\\d*\\.\\d+"',
        ),
        bug="parse 1.22.0 -> 1.22.1: 'Parse zero-precision floats formatted without a decimal point' "
        "(README changelog).",
    ),
    Spec(
        id="parse-3",
        project=PARSE_1223,
        old="1.22.2",
        target="parse/__init__.py",
        source="parse/__init__.py",
        function="strf_date_convert",
        tests=["tests/test_parse.py"],
        search=lines("        return dt.timetz()"),
        replace=lines("        return dt.time()"),
        bug="parse 1.22.2 -> 1.22.3: 'Preserve timezone offsets in strftime time-only results' (README changelog).",
    ),
    Spec(
        id="parse-4",
        project=PARSE_1224,
        old="1.22.3",
        target="parse/__init__.py",
        source="parse/__init__.py",
        function="date_convert",
        tests=["tests/test_parse.py"],
        search=lines(
            "            # matching is case-insensitive (re.IGNORECASE), so normalise the",
            "            # captured meridiem before the case-sensitive conversion below",
            "            am = am.strip().upper()",
        ),
        replace=lines("            am = am.strip()"),
        bug="parse 1.22.3 -> 1.22.4: 'Fix case-sensitive am/pm and Zulu conversion under case-insensitive "
        "matching' (README changelog); the am/pm half.",
    ),
    Spec(
        id="parse-5",
        project=PARSE_1224,
        old="1.22.3",
        target="parse/__init__.py",
        source="parse/__init__.py",
        function="date_convert",
        tests=["tests/test_parse.py"],
        search=lines(
            "            if int(tzm) >= 60:",
            '                raise ValueError("timezone minute must be in 0..59")',
            "            offset = int(tzm) + int(tzh) * 60",
        ),
        replace=lines("            offset = int(tzm) + int(tzh) * 60"),
        bug="parse 1.22.3 -> 1.22.4: 'Reject out-of-range timezone minutes' (README changelog).",
    ),
    Spec(
        id="parse-6",
        project=PARSE_1224,
        old="1.22.3",
        target="parse/__init__.py",
        source="parse/__init__.py",
        function="strf_date_convert",
        tests=["tests/test_parse.py"],
        search=lines(
            '    if "%y" not in type and "%Y" not in type:  # year not specified',
            "        # Parse against the current year rather than strptime's default of",
            "        # 1900, so that Feb 29 and %j day numbers resolve in the right year.",
            '        x = "%s %d" % (x, datetime.today().year)',
            '        type += " %Y"',
            "    dt = datetime.strptime(x, type)",
        ),
        replace=lines(
            "    dt = datetime.strptime(x, type)",
            '    if "%y" not in type and "%Y" not in type:  # year not specified',
            "        dt = dt.replace(year=datetime.today().year)",
        ),
        bug="parse 1.22.3 -> 1.22.4: 'Resolve year-less strftime formats against the current year' (README changelog).",
    ),
    Spec(
        id="sqlparse-1",
        project=SQLPARSE_051,
        old="0.5.0",
        target="sqlparse/filters/others.py",
        source="sqlparse/filters/others.py",
        function="StripWhitespaceFilter._stripws_parenthesis",
        tests=["tests/test_format.py"],
        search=lines(
            "        if tlist.tokens[-2].is_group:",
            "            # save to remove the last whitespace",
            "            while tlist.tokens[-2].tokens[-1].is_whitespace:",
            "                tlist.tokens[-2].tokens.pop(-1)",
            "        self._stripws_default(tlist)",
        ),
        replace=lines("        self._stripws_default(tlist)"),
        bug="sqlparse 0.5.0 -> 0.5.1: 'Fix whitespace removal with nested expressions (issue782)' (CHANGELOG).",
    ),
    Spec(
        id="sqlparse-2",
        project=SQLPARSE_054,
        old="0.5.3",
        target="sqlparse/filters/others.py",
        source="sqlparse/filters/others.py",
        function="StripCommentsFilter._process",
        tests=["tests/test_format.py"],
        search=lines("                tlist.tokens.remove(token)", "                tidx -= 1"),
        replace=lines("                tlist.tokens.remove(token)"),
        bug="sqlparse 0.5.3 -> 0.5.4: 'Fix strip_comments not removing all comments when input contains only "
        "comments (issue801, pr803 by stropysh)' (CHANGELOG).",
    ),
    Spec(
        id="sqlparse-3",
        project=SQLPARSE_060,
        old="0.5.5",
        target="sqlparse/sql.py",
        source="sqlparse/sql.py",
        function="NameAliasMixin.get_real_name",
        tests=["tests/test_parse.py"],
        search=lines(
            "        # a.b.c -> real name is the component after the *last* dot",
            "        dot_idx = None",
            "        for idx, tok in enumerate(self.tokens):",
            "            if tok.match(T.Punctuation, '.'):",
            "                dot_idx = idx",
        ),
        replace=lines("        # a.b", "        dot_idx, _ = self.token_next_by(m=(T.Punctuation, '.'))"),
        bug="sqlparse 0.5.5 -> 0.6.0: 'Fix get_real_name for names with more than two dotted parts (issue332, "
        "pr865 by chuenchen309)' (CHANGELOG).",
    ),
    Spec(
        id="sqlparse-4",
        project=SQLPARSE_060,
        old="0.5.5",
        target="sqlparse/engine/grouping.py",
        source="sqlparse/engine/grouping.py",
        function="group_functions",
        tests=["tests/test_grouping.py"],
        search=lines("        if tmp_token.value.upper() == 'AS':"),
        replace=lines("        if tmp_token.value == 'AS':"),
        bug="sqlparse 0.5.5 -> 0.6.0: 'Fix function grouping being skipped in CREATE TABLE ... AS SELECT "
        "statements when the as keyword is lowercase (pr867 by Osamaali313)' (CHANGELOG).",
    ),
    Spec(
        id="markdown-1",
        project=MD_38,
        old="3.7",
        target="markdown/extensions/toc.py",
        source="markdown/extensions/toc.py",
        function="TocTreeprocessor.run",
        tests=["tests/test_syntax/extensions/test_toc.py"],
        search=lines("""                        'id': unescape(el.attrib["id"]),"""),
        replace=lines("""                        'id': el.attrib["id"],"""),
        bug="Markdown 3.7 -> 3.8: 'Backslash Unescape IDs set via attr_list on toc (#1493)' (docs/changelog.md).",
    ),
    Spec(
        id="markdown-2",
        project=MD_311,
        old="3.10.3",
        target="markdown/extensions/abbr.py",
        source="markdown/extensions/abbr.py",
        function="AbbrBlockprocessor.run",
        tests=["tests/test_syntax/extensions/test_abbr.py"],
        search=lines("                    self.abbrs.pop(abbr, None)"),
        replace=lines("                    self.abbrs.pop(abbr)"),
        bug="Markdown 3.10.3 -> 3.11: 'Ensure removing Abbreviations does not raise an error (#1634)' "
        "(docs/changelog.md).",
    ),
    Spec(
        id="markdown-3",
        project=MD_3113,
        old="3.11.2",
        target="markdown/extensions/abbr.py",
        source="markdown/extensions/abbr.py",
        function="AbbrTreeprocessor.iter_element",
        tests=["tests/test_syntax/extensions/test_abbr.py"],
        search=lines(
            "                    if self.abbrs[m.group(0)]:",
            "                        abbr = self.create_element(self.abbrs[m.group(0)], m.group(0), tail[m.end():])",
            "                        parent.insert(index, abbr)",
            "                        tail = tail[:m.start()]",
        ),
        replace=lines(
            "                    abbr = self.create_element(self.abbrs[m.group(0)], m.group(0), tail[m.end():])",
            "                    parent.insert(index, abbr)",
            "                    tail = tail[:m.start()]",
        ),
        bug="Markdown 3.11.2 -> 3.11.3: 'Ignore glossary abbreviations with empty definitions after inline "
        "elements, consistently with abbreviations before inline elements' (docs/changelog.md).",
    ),
    Spec(
        id="markdown-4",
        project=MD_3113,
        old="3.11.2",
        target="markdown/extensions/codehilite.py",
        source="markdown/extensions/codehilite.py",
        function="CodeHilite.hilite",
        tests=["tests/test_syntax/extensions/test_code_hilite.py"],
        search=lines("                classes.append('{}{}'.format(self.lang_prefix, _escape_attrib_html(self.lang)))"),
        replace=lines("                classes.append('{}{}'.format(self.lang_prefix, self.lang))"),
        bug="Markdown 3.11.2 -> 3.11.3: 'Escape the language name in the codehilite extension's non-Pygments "
        "output to maintain consistency with Pygments output' (docs/changelog.md).",
    ),
    Spec(
        id="pathspec-1",
        project=PATHSPEC_0121,
        old="0.12.0",
        target="pathspec/pathspec.py",
        source="pathspec/pathspec.py",
        function="PathSpec.match_file",
        tests=["tests/test_03_pathspec.py"],
        search=lines("\t\treturn bool(include)"),
        replace=lines("\t\treturn include"),
        bug="pathspec 0.12.0 -> 0.12.1: 'Issue #84: PathSpec.match_file() returns None since 0.12.0' (CHANGES.rst).",
    ),
    Spec(
        id="pathspec-2",
        project=PATHSPEC_0111,
        old="0.11.0",
        target="pathspec/gitignore.py",
        source="pathspec/gitignore.py",
        function="GitIgnoreSpec._match_file",
        tests=["tests/test_gitignore.py"],
        search=lines(
            "\t\t\t\t\tif pattern.include and dir_mark:",
            "\t\t\t\t\t\tout_matched = pattern.include",
            "\t\t\t\t\t\tout_priority = priority",
            "\t\t\t\t\telif priority >= out_priority:",
        ),
        replace=lines("\t\t\t\t\tif priority >= out_priority:"),
        bug="pathspec 0.11.0 -> 0.11.1: 'Issue #74: Include directory should override exclude file.' (CHANGES.rst).",
    ),
    Spec(
        id="cachetools-1",
        project=CACHETOOLS_703,
        old="7.0.2",
        target="cachetools/_cachedmethod.py",
        source="src/cachetools/_cachedmethod.py",
        function="_DescriptorBase.__get__",
        tests=["tests/test_cachedmethod.py"],
        search=lines(
            "        if obj is None:",
            "            # Return the wrapper itself without modification when accessed",
            "            # through the class to support class-level introspection, such",
            "            # as for mocking with autospec=True in unittest.mock.",
            "            pass",
            "        elif self.__attrname is not None:",
        ),
        replace=lines("        if self.__attrname is not None:"),
        bug="cachetools 7.0.2 -> 7.0.3: 'Fix DeprecationWarning when creating an autospec mock with @cachedmethod "
        "decorations' (CHANGELOG.rst).",
    ),
    Spec(
        id="click-1",
        project=CLICK_841,
        old="8.4.0",
        target="click/types.py",
        source="src/click/types.py",
        function="Choice.shell_complete",
        tests=["tests/test_shell_completion.py"],
        search=lines("        str_choices = [self.normalize_choice(choice, ctx) for choice in self.choices]"),
        replace=lines("        str_choices = map(str, self.choices)", ""),
        bug="click 8.4.0 -> 8.4.1: 'Shell completion of Enum values used as Choice options produces a valid "
        "completion result (issue 3015, PR 3471)' (CHANGES.md).",
    ),
    Spec(
        id="click-2",
        project=CLICK_841,
        old="8.4.0",
        target="click/shell_completion.py",
        source="src/click/shell_completion.py",
        function="shell_complete",
        tests=["tests/test_shell_completion.py"],
        search=lines(
            "    # Write bytes, otherwise Windows text stdout translates LF to CRLF and breaks.",
            '    if instruction == "source":',
            "        echo(comp.source().encode(), nl=False)",
            "        return 0",
            "",
            '    if instruction == "complete":',
            "        echo(comp.complete().encode())",
        ),
        replace=lines(
            '    if instruction == "source":',
            "        echo(comp.source())",
            "        return 0",
            "",
            '    if instruction == "complete":',
            "        echo(comp.complete())",
        ),
        bug="click 8.4.0 -> 8.4.1: 'Zsh completion scripts parse correctly on Windows (issue 3277, PR 3466)' "
        "(CHANGES.md).",
    ),
    Spec(
        id="click-3",
        project=CLICK_842,
        old="8.4.1",
        target="click/termui.py",
        source="src/click/termui.py",
        function="echo_via_pager",
        tests=["tests/test_termui.py"],
        search=lines(
            "            pager.write(text)",
            "            # Flush after each write so a slow generator streams to the pager",
            "            # incrementally rather than staying invisible until the pipe buffer",
            "            # fills (~8 KB).",
            "            pager.flush()",
        ),
        replace=lines("            pager.write(text)"),
        bug="click 8.4.1 -> 8.4.2: 'echo_via_pager flushes after each write, so passing a generator streams "
        "output to the pager incrementally instead of staying hidden until the pipe buffer fills (issue 3242, "
        "issue 2542, PR 3534)' (CHANGES.md).",
    ),
]
