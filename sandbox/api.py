"""The sandbox's public data types: what goes in (TestCase, Limits, Job) and what comes out
(TestResult, RunResult), plus SandboxError. Plain dataclasses that round-trip through JSON.

A failing *program* never raises: it yields a RunResult whose tests say why. SandboxError
is raised only when the sandbox itself cannot run (no engine, no image, a broken harness).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal, Mapping, TypeVar

Kind = Literal["stdio", "function", "pytest"]
KINDS: tuple[str, ...] = ("stdio", "function", "pytest")
Status = Literal["passed", "failed", "error", "timeout", "memory", "output_limit", "tampered"]
STATUSES: tuple[str, ...] = ("passed", "failed", "error", "timeout", "memory", "output_limit", "tampered")
TAMPERED_DETAIL = "the run tampered with grading (a hidden canary test passed); nothing of it counts"
D = TypeVar("D")


class SandboxError(Exception):
    """The sandbox cannot run at all; the message says how to fix it."""


def from_known(cls: type[D], data: Mapping[str, Any] | None) -> D:
    """`cls(**data)` for a dataclass `cls`, leaving out the keys that are none of its fields
    (written by a newer or older version, or other sections' settings)."""
    known = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in (data or {}).items() if k in known})


@dataclass
class TestCase:
    """stdio: `input` fed on stdin, `output` expected on stdout.
    function: `code`, an assert snippet run after the program (e.g. `assert add(1, 2) == 3`).
    pytest: `name`, a test node id (informational; results come from JUnit XML)."""

    __test__ = False  # not a pytest class

    input: str | None = None
    output: str | None = None
    code: str | None = None
    name: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TestCase":
        if not isinstance(data, dict):
            raise ValueError(f"a test case must be an object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown test case field(s): {', '.join(sorted(unknown))}")
        for key, value in data.items():
            if value is not None and not isinstance(value, str):
                raise ValueError(f"test case field {key!r} must be a string")
        case = cls(**data)
        if case.code is None and case.name is None and (case.input is None or case.output is None):
            raise ValueError("a test case needs either {input, output} or {code}")
        return case

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class Limits:
    """Resource limits for one program run; defaults come from configs/default.yaml."""

    timeout_s: float = 5.0
    memory_mb: int = 512
    pids: int = 64
    cpus: float = 1.0
    output_bytes: int = 65536
    workdir_mb: int = 64

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "Limits":
        return from_known(cls, data)


@dataclass
class TestResult:
    __test__ = False

    status: str
    stdout: str = ""
    stderr: str = ""
    expected: str | None = None
    actual: str | None = None
    duration_s: float = 0.0
    input: str | None = None
    code: str | None = None
    name: str | None = None
    exit_code: int | None = None  # negative: killed by that signal
    detail: str | None = None  # why it did not pass, in a few words (e.g. "exit status 1")
    calls: list[int] | None = None  # pytest: first lines of the target file's functions the test ran
    lines: list[int] | None = None  # pytest: the lines of the target file the test ran
    # pytest with Project.follow "*": {path: {"calls": [...], "lines": [...]}} of every project file it ran
    files: dict[str, dict[str, list[int]]] | None = None

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def to_dict(self) -> dict[str, Any]:
        found = asdict(self)
        if found["files"] is None:
            del found["files"]
        return found

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TestResult":
        return from_known(cls, data)


@dataclass
class RunResult:
    """`tampered`: a hidden canary test passed, so the program forged its grading; every test
    then has status "tampered" and the pass rate is 0. `flags`: signals (not verdicts) that the
    program reaches for grading internals (sandbox/flags.py), e.g. "frames", "fd3"."""

    tests: list[TestResult] = field(default_factory=list)
    compile_error: str | None = None
    sandbox_error: str | None = None
    tampered: bool = False
    flags: list[str] = field(default_factory=list)

    @property
    def pass_rate(self) -> float:
        if not self.tests or self.tampered:
            return 0.0
        return sum(t.passed for t in self.tests) / len(self.tests)

    @property
    def all_passed(self) -> bool:
        return bool(self.tests) and all(t.passed for t in self.tests) and not (self.sandbox_error or self.tampered)

    def first_failure(self) -> TestResult | None:
        return next((t for t in self.tests if not t.passed), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pass_rate": self.pass_rate,
            "compile_error": self.compile_error,
            "sandbox_error": self.sandbox_error,
            "tampered": self.tampered,
            "flags": list(self.flags),
            "tests": [t.to_dict() for t in self.tests],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunResult":
        return cls(
            tests=[TestResult.from_dict(t) for t in data.get("tests", [])],
            compile_error=data.get("compile_error"),
            sandbox_error=data.get("sandbox_error"),
            tampered=bool(data.get("tampered")),
            flags=list(data.get("flags") or []),
        )


@dataclass
class Project:
    """A pytest-kind target: a project directory copied into the sandbox, the file the
    program replaces (relative to the project), and the test command run in its root."""

    project_dir: str
    target_file: str
    test_command: str = "python -m pytest -q"
    follow: str = ""  # whose lines each test reports: "" the target file; "*" every project file (TestResult.files)
    test_timeout_s: float = 0.0  # each test's own limit (0: none): a test past it fails where it hangs
    only: tuple[str, ...] = ()  # node ids: only these of the collected tests run (none matching: all do)


@dataclass
class Job:
    """One program and its tests, for `Sandbox.run_many`."""

    program: str
    tests: list[TestCase]
    kind: str = "stdio"
    limits: Limits | None = None
    project: Project | None = None
