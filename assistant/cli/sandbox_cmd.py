"""`cobalt sandbox build|check|run`: the only bridge between the CLI and `sandbox`.

build  make the sandbox image (idempotent; fast when it exists; offline via debootstrap)
check  report the engine, the image and a smoke run
run    run a program file against a JSON list of test cases and print the RunResult
       (exit 0 whether or not the program passes; bad input is one sentence and exit 1)
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.console import action_parsers, add_action
from assistant.errors import UserError
from assistant.runtime import open_sandbox
from sandbox import Project, TestCase
from sandbox.engine import connect
from sandbox.image import build_image

if TYPE_CHECKING:
    from assistant.settings import Settings

FIELD_CHARS = 400


def register(sub: argparse._SubParsersAction) -> None:
    actions = action_parsers(sub, "sandbox", "build, check or use the Docker sandbox")

    build = add_action(actions, "build", cmd_build, "build the sandbox image if it is missing")
    build.add_argument("--force", action="store_true", help="rebuild the harness layer even if it exists")
    build.add_argument("--offline", action="store_true", help="skip the registry; use debootstrap")

    add_action(actions, "check", cmd_check, "report engine, image and a smoke run")

    run = add_action(actions, "run", cmd_run, "run a program against tests")
    run.add_argument("--program", required=True, help="the program file")
    run.add_argument("--tests", required=True, help="JSON list of test cases: {input, output} or {code}")
    run.add_argument("--kind", choices=["stdio", "function", "pytest"], default="stdio")
    run.add_argument("--project", help="pytest kind: the project directory")
    run.add_argument("--target", help="pytest kind: the file (relative to the project) the program replaces")
    run.add_argument("--test-command", default="python -m pytest -q", help="pytest kind: the test command")
    run.add_argument("--timeout", type=float, help="seconds per test (default from the config)")
    run.add_argument("--json", action="store_true", help="print the RunResult as JSON")


def cmd_build(args: argparse.Namespace, settings: Settings) -> int:
    tag = build_image(
        connect(),
        settings.sandbox.image,
        force=args.force,
        offline=True if args.offline else None,
        progress=lambda line: print(line, flush=True),
    )
    print(tag)
    return 0


def cmd_check(args: argparse.Namespace, settings: Settings) -> int:
    client = connect()
    version = client.version()
    print(f"engine: Docker {version.get('Version', '?')} (API {version.get('ApiVersion', '?')})")
    start = time.monotonic()
    with open_sandbox(settings, client=client, pool_size=1, concurrency=1) as box:
        print(f"image: {box.image} present; transport: {box.transport}")
        result = box.run("print(sum(map(int, input().split())))", [TestCase(input="2 3\n", output="5\n")])
    took = time.monotonic() - start
    if not result.all_passed:
        test = result.tests[0] if result.tests else None
        why = result.sandbox_error or (test.detail if test else "no result")
        raise UserError(f"the sandbox smoke run failed ({why}): rebuild with `cobalt sandbox build --force`")
    print(f"smoke run: passed in {took:.2f} s (container start included)")
    return 0


def _load_tests(path: str) -> list:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"tests file {path} does not exist") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"tests file {path} is not valid JSON: {exc}") from None
    if not isinstance(data, list):
        raise UserError(f"tests file {path} must hold a JSON list of test cases, not {type(data).__name__}")
    try:
        return [TestCase.from_dict(item) for item in data]
    except ValueError as exc:
        raise UserError(f"tests file {path}: {exc}") from None


def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    try:
        program = Path(args.program).read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read the program file {args.program}: {exc.strerror}") from None
    tests = _load_tests(args.tests)
    project = None
    if args.kind == "pytest":
        if not (args.project and args.target):
            raise UserError("the pytest kind needs --project DIR and --target FILE")
        project = Project(args.project, args.target, args.test_command)
    limits = replace(settings.sandbox.limits, **({"timeout_s": args.timeout} if args.timeout else {}))
    with open_sandbox(settings, limits=limits, pool_size=1, concurrency=1) as box:
        try:
            result = box.run(program, tests, args.kind, project=project)
        except ValueError as exc:
            raise UserError(str(exc)) from None
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        _print_result(result)
    return 0


def _cut(text: str | None, limit: int = FIELD_CHARS) -> str:
    text = text or ""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n... [{len(text) - limit} characters cut] ...\n{text[-half:]}"


def _print_result(result) -> None:
    if result.sandbox_error:
        print(f"sandbox error: {result.sandbox_error}")
    if result.compile_error:
        print(f"compile error:\n{_cut(result.compile_error)}")
    if result.tampered:
        print("tampered: a hidden canary test passed, so the program forged its grading; nothing counts")
    if result.flags:
        print(f"flags (signals, not failures): {', '.join(result.flags)}")
    for i, test in enumerate(result.tests, 1):
        label = test.name or f"test {i}"
        print(f"{label}: {test.status} ({test.duration_s:.3f} s){' - ' + test.detail if test.detail else ''}")
        if test.passed or result.compile_error:
            continue
        for title, value in (
            ("input", test.input),
            ("code", test.code),
            ("expected", test.expected),
            ("actual", test.actual),
            ("stderr", test.stderr),
        ):
            if value:
                print(f"  {title}:\n    " + _cut(value).rstrip("\n").replace("\n", "\n    "))
    passed = sum(t.passed for t in result.tests)
    print(f"passed {passed}/{len(result.tests)} (pass rate {result.pass_rate:.2f})")
