"""The pytest kind, inside the container (stdlib only; shipped into the image).

Unpacks the project (a gzipped tar sent by the host) into /work/project, writes the
program to the target file, runs the test command with `/bin/sh -c` as an isolated child
(same limits as any test; PYTEST_ADDOPTS adds a JUnit XML report at a random path), and
turns the report into one result per test case. Skipped tests count as failed: a program
that makes tests skip itself must not raise its pass rate.

Deliberately not defended: the program runs inside the test runner, so a hostile program
could rewrite the report. The pytest kind is for the user's own project, not for grading
untrusted training rollouts.
"""

from __future__ import annotations

import io
import json
import os
import signal
import tarfile
import xml.etree.ElementTree as ET

from sandbox.harness.proc import CHILD_ENV

PROJECT = "/work/project"
PYTEST_ENV = {**CHILD_ENV, "PYTHONDONTWRITEBYTECODE": "1"}
PLUGINS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plugins")  # cobalt_calls, _timeout, _only


def _inside(root: str, path: str) -> str:
    full = os.path.normpath(os.path.join(root, path))
    if not full.startswith(root + os.sep):
        raise ValueError(f"path {path!r} leaves the project directory")
    return full


def extract_project(data: bytes, target_file: str, program: str, root: str = PROJECT) -> None:
    """Unpack regular files and directories only (no links, devices, absolute or .. paths)."""
    os.makedirs(root, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
        for member in tar.getmembers():
            path = _inside(root, member.name) if member.name not in ("", ".") else root
            if member.isdir():
                os.makedirs(path, exist_ok=True)
            elif member.isfile():
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with tar.extractfile(member) as src, open(path, "wb") as dst:
                    dst.write(src.read())
                os.chmod(path, 0o755 if member.mode & 0o111 else 0o644)
    target = _inside(root, target_file)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write(program)


def _node_id(case: ET.Element) -> str:
    """JUnit xunit1 attributes -> a pytest node id like tests/test_a.py::TestX::test_y."""
    name, classname, file = case.get("name", "?"), case.get("classname", ""), case.get("file")
    if not file:
        return f"{classname}::{name}" if classname else name
    module = file[:-3].replace("/", ".") if file.endswith(".py") else file
    parts = [file]
    if classname.startswith(module + "."):
        parts += classname[len(module) + 1 :].split(".")
    return "::".join(parts + [name])


def parse_junit(path: str, keep: int) -> list[dict]:
    """One result per <testcase>; raises OSError/ET.ParseError if there is no usable report."""
    results = []
    for case in ET.parse(path).getroot().iter("testcase"):
        status, text, message = "passed", "", None
        for tag, verdict in (("failure", "failed"), ("error", "error"), ("skipped", "failed")):
            node = case.find(tag)
            if node is not None:
                status, message = verdict, node.get("message") or ""
                text = (node.text or message)[:keep]
                if tag == "skipped":
                    message = f"skipped: {message}"
                break
        results.append(
            {
                "name": _node_id(case),
                "status": status,
                "stderr": text,
                "stdout": (case.findtext("system-out") or "")[:keep],
                "detail": message or "",
                "actual": message,
                "duration_s": float(case.get("time") or 0.0),
            }
        )
    return results


def add_calls(results: list[dict], path: str) -> None:
    """Each result's `calls` (the first lines of the target's functions its test ran) and `lines`
    (the target's lines it ran): the cobalt_calls plugin's report, matched by node id, else by the
    test's own name."""
    try:
        with open(path) as fh:
            report = json.load(fh)
    except (OSError, ValueError):
        return
    if not isinstance(report, dict):
        return
    for key in ("calls", "lines"):
        per_test = report.get(key)
        if isinstance(per_test, dict):
            _attach(results, key, per_test)
    files = report.get("files")
    if isinstance(files, dict):  # every project file followed: each test's lines per file
        for path, found in files.items():
            if not isinstance(found, dict):
                continue
            for key in ("calls", "lines"):
                mine = [dict(name=r["name"]) for r in results]
                _attach(mine, key, found.get(key) if isinstance(found.get(key), dict) else {})
                for result, got in zip(results, mine):
                    if key in got:
                        result.setdefault("files", {}).setdefault(path, {})[key] = got[key]


def _attach(results: list[dict], key: str, per_test: dict) -> None:
    by_name: dict[str, list] = {}
    for node, lines in per_test.items():
        by_name.setdefault(node.rsplit("::", 1)[-1], []).append(lines)
    for result in results:
        lines = per_test.get(result["name"])
        if lines is None:
            same = by_name.get(result["name"].rsplit("::", 1)[-1], [])
            lines = same[0] if len(same) == 1 else None
        if isinstance(lines, list):
            result[key] = [n for n in lines if isinstance(n, int)]


def run_project(header: dict, spawn, supervise, emit) -> None:
    limits, keep = header["limits"], header["limits"]["output_bytes"]
    report = f"/tmp/junit-{os.urandom(8).hex()}.xml"
    try:
        extract_project(header["project"], header["target_file"], header["program"])
    except (ValueError, OSError, tarfile.TarError) as exc:
        emit({"name": header["test_command"], "status": "error", "detail": f"could not unpack the project: {exc}"})
        return
    calls = f"/tmp/calls-{os.urandom(8).hex()}.json"  # which of the target's functions each test ran
    addopts = (
        f"-p no:cacheprovider --junitxml={report} -o junit_family=xunit1 --tb=short"  # frames: path:line: in f
        " -p cobalt_calls -p cobalt_timeout -p cobalt_only"
    )
    env = dict(
        PYTEST_ENV,
        PYTEST_ADDOPTS=addopts,
        PYTHONPATH=PLUGINS,  # the image's site-packages has it too, for a command that sets its own PYTHONPATH
        COBALT_CALLS_TARGET=header.get("follow") or header["target_file"],
        COBALT_CALLS_ROOT=PROJECT,
        COBALT_CALLS_OUT=calls,
        COBALT_TEST_TIMEOUT_S=str(header.get("test_timeout_s") or 0),
        COBALT_ONLY=json.dumps(list(header.get("only") or [])),
    )
    command = ["/bin/sh", "-c", header["test_command"]]

    def target() -> None:
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL)
        os.execve(command[0], command, env)

    out = supervise(spawn(target, limits, cwd=PROJECT, env=env), b"", limits["timeout_s"], max(keep, 8 << 20), keep)
    whole = {
        "name": header["test_command"],
        "exit_code": out["code"],
        "duration_s": out["duration_s"],
        "stdout": out["out"][:keep].decode("utf-8", "replace"),
        "stderr": out["err"].decode("utf-8", "replace"),
        "clean": out["clean"],
    }
    if out["why"]:
        detail = "time limit exceeded" if out["why"] == "timeout" else "output limit exceeded"
        emit(dict(whole, status=out["why"], detail=f"{detail} while running {header['test_command']!r}"))
        return
    try:
        results = parse_junit(report, keep)
    except (OSError, ET.ParseError):
        results = []
    add_calls(results, calls)
    for result in results:
        emit(result)
    if not results:
        emit(
            dict(
                whole,
                status="error",
                detail="the test command wrote no JUnit report with test cases "
                f"(it must run pytest); exit status {out['code']}",
            )
        )
