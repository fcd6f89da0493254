"""The sandbox harness: runs *inside* the container (stdlib only; shipped into the image).

`harness serve` / `harness watchdog` are PID 1 of pool containers (sandbox/harness/init.py).

`harness run` runs one program's job: forked by `serve` from a warm PID 1 (the default), or
started by one `docker exec` per program (`transport="exec"`). It reads frames on stdin
(4-byte big-endian length + a marshal'd dict; marshal is builtin, json costs ~10 ms of
imports per exec): a header, then per test its input (and, for stdio, its
expected output, read only after the test's child is gone). It compiles the program once
and forks one child per test from this warm interpreter (a fork server: no interpreter
start per test). The child isolates itself (fresh fds 0/1/2 + a private result pipe on fd
3, setsid, rlimits, clean env) and runs the program as `__main__` from `solution.py`, so
tracebacks show the user's line numbers. The parent feeds stdin, reads output with caps,
enforces the wall-clock timeout, kills every other process of the test, then grades. It
writes one JSON line per test on stdout and `{"done": true}` at the end.

The parent never trusts the child's word for a pass: stdio passes only on exit status 0
and matching output (the expected output never enters the child); stdio tests of one job
with the same input share one run, compared with each one's expected output (so the host's
stdio canary, a real input with a random expected output, costs a comparison). A *value* function test
(`assert CALL == EXPECTED` and similar shapes, sandbox/checks.py) reaches the child as its
setup and CALL only: the child's record carries CALL's result as plain data, which this
process passes on as status "value" for the host to compare; the expected value never
enters the container. Any other function test passes only if the child's record on the
private pipe, carrying a per-test nonce, says every statement of the snippet ran, and it
exited 0. The harness is non-dumpable, so a child cannot open /proc/<harness>/fd/1 to print
results. A program that finds the nonce in its own memory can still forge such a record,
or read a snippet's constants from its frames: the host's hidden canaries
(sandbox/canary.py) turn that into a `tampered` run. Docker, pools and retries live on the
host side (sandbox/pool.py, sandbox/backend.py); the child's side is
sandbox/harness/child.py, process control sandbox/harness/proc.py.
"""

from __future__ import annotations

import marshal
import os
import signal
import struct
import sys

from sandbox.harness.child import PROGRAM_FILE, WORK, compile_snippet, parse_record, run_child
from sandbox.harness.plain import quote as _quote
from sandbox.harness.proc import (
    PR_SET_CHILD_SUBREAPER,
    PR_SET_DUMPABLE,
    oom_kills,
    prctl,
    reap_all,
    remove_ipc,
    remove_mqueues,
    spawn,
    supervise,
    wipe,
)

SHARED_RUN_CAP = 1 << 20  # stdio output kept for reuse by a later test with the same input


# ----------------------------------------------------------------------------- framing
def _read_exact(n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        data = os.read(0, n - got)  # os.read, not sys.stdin: no read-ahead of later frames
        if not data:
            raise EOFError
        chunks.append(data)
        got += len(data)
    return b"".join(chunks)


def read_frame() -> dict | None:
    try:
        (size,) = struct.unpack(">I", _read_exact(4))
        return marshal.loads(_read_exact(size))
    except EOFError:
        return None


def to_json(obj: object) -> str:
    """JSON for the few types results hold, without importing `json`."""
    if isinstance(obj, str):
        return _quote(obj)
    if obj is None or isinstance(obj, bool):
        return {None: "null", True: "true", False: "false"}[obj]
    if isinstance(obj, (int, float)):
        return repr(obj)
    if isinstance(obj, dict):
        return "{" + ", ".join(f"{_quote(str(k))}: {to_json(v)}" for k, v in obj.items()) + "}"
    if isinstance(obj, (list, tuple)):
        return "[" + ", ".join(to_json(v) for v in obj) + "]"
    return _quote(str(obj))


def emit(obj: dict) -> None:
    data = (to_json(obj) + "\n").encode()
    while data:
        data = data[os.write(1, data) :]


# ----------------------------------------------------------------------------- grading
def classify(
    kind: str, out: dict, rec: dict | None, limits: dict, oom: bool, value: bool = False
) -> tuple[str | None, str]:
    """(status, detail); status None means "exited 0, compare the output" (stdio). A value
    test never "passed" here: its value goes to the host, which compares (a record without a
    value fails there)."""
    code = out["code"]
    if out["why"] == "timeout" or code == -signal.SIGXCPU:
        return "timeout", f"time limit of {limits['timeout_s']:g} s exceeded"
    if out["why"] == "output_limit":
        return "output_limit", "output limit exceeded; the program was stopped"
    if (rec and rec["e"] == "MemoryError") or (code == -signal.SIGKILL and oom):
        return "memory", f"memory limit of {limits['memory_mb']} MB exceeded"
    if code < 0:
        return "error", f"killed by signal {_signal_name(-code)}"
    exc = rec["e"] if rec and rec["o"] == "exc" else None
    if kind == "stdio":
        if code == 0:
            return None, ""
        if exc:
            return "error", f"runtime error: {exc}"
        return "failed", f"exit status {code}"
    if rec is None or rec["o"] == "exit":
        return "error", "the program exited before every statement of the test ran"
    if rec["o"] == "unplain":
        return "failed", f"the returned value cannot be compared: {rec['a']}"
    if exc == "AssertionError":
        return "failed", "assertion failed"
    if exc:
        return "error", f"runtime error: {exc}"
    if code != 0:
        return "failed", f"exit status {code}"
    return ("value", "") if value else ("passed", "")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def run_test(code, kind: str, test: dict, limits: dict) -> dict:
    nonce = os.urandom(8).hex()
    snippet = None
    if kind == "function":
        try:
            snippet = compile_snippet(test.get("code") or "", bool(test.get("value")))
        except (SyntaxError, ValueError) as exc:
            return {"status": "error", "detail": f"the test snippet is not valid Python: {exc}"}
    stdin_data = (test.get("input") or "").encode("utf-8", "surrogatepass")
    keep = limits["output_bytes"]
    read_cap = max(keep, int(test.get("read_cap") or 4096))  # `protocol.read_cap`: no exact length
    oom_before = oom_kills()
    proc = spawn(lambda: run_child(code, snippet, nonce, test.get("code") or ""), limits)
    out = supervise(proc, stdin_data, limits["timeout_s"], read_cap, keep)
    rec = parse_record(out["rec"], nonce)
    status, detail = classify(kind, out, rec, limits, oom_kills() > oom_before, bool(test.get("value")))
    result = {
        "status": status,
        "detail": detail,
        "exit_code": out["code"],
        "duration_s": out["duration_s"],
        "stdout": out["out"][:keep].decode("utf-8", "replace"),
        "stderr": out["err"].decode("utf-8", "replace"),
        "clean": out["clean"],
    }
    if kind == "function" and rec:
        result["actual"], result["expected"] = rec["a"], rec["x"]
        if status == "value":
            result["value"] = rec["v"] or ""
    if kind == "stdio":
        result["full"] = out["out"].decode("utf-8", "replace")
    return result


def run_programs(header: dict) -> None:
    kind, limits = header["kind"], header["limits"]
    try:
        code = compile(header["program"], PROGRAM_FILE, "exec", dont_inherit=True, optimize=0)
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError) as exc:
        import traceback

        emit({"compile_error": "".join(traceback.format_exception_only(type(exc), exc))})
        for _ in range(header["n"] * (2 if kind == "stdio" else 1)):  # the unread test frames: left in
            if read_frame() is None:  # stdin, PID 1 would take them for the next job's header
                break
        return
    ran: dict[str, dict] = {}  # stdio: input -> its run; tests with the same input share one run
    for _ in range(header["n"]):
        test = read_frame()
        if test is None:
            return
        key = (test.get("input") or "") if kind == "stdio" else None
        if key is not None and key in ran:
            result = dict(ran[key])
        else:
            if not (wipe("/work") and wipe("/tmp")):
                emit({"fatal": "could not empty the work directory"})
                return
            remove_ipc()  # between tests too: one test's queues and shared memory are not the next one's
            remove_mqueues()
            with open(os.path.join(WORK, PROGRAM_FILE), "w", encoding="utf-8", errors="surrogatepass") as fh:
                fh.write(header["program"])
            result = run_test(code, kind, test, limits)
            if key is not None and len(result.get("full", "")) <= SHARED_RUN_CAP:
                ran[key] = dict(result)
        if kind == "stdio":
            expected = (read_frame() or {}).get("expected") or ""
            full = result.pop("full", "")
            if result["status"] is None:
                from sandbox.harness.compare import outputs_match

                passed = outputs_match(expected, full)
                result["status"] = "passed" if passed else "failed"
                result["detail"] = "" if passed else "wrong answer"
            del expected, full  # not bound while the next test's child is forked (it inherits this frame)
        emit(result)


def run() -> None:
    # A program that sends SIGINT to its parent would raise KeyboardInterrupt here and pass its own
    # run off as a sandbox fault (dropped, not scored); each test's child takes Python's back.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    prctl(PR_SET_DUMPABLE, 0)
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    header = read_frame()
    if header is None:
        return
    if not (wipe("/work") and wipe("/tmp") and reap_all() and remove_ipc()):
        emit({"fatal": "the container was not clean"})
        return
    remove_mqueues()
    if header["kind"] == "pytest":
        from sandbox.harness.project import run_project

        run_project(header, spawn, supervise, emit)
    else:
        run_programs(header)
    emit({"done": True})


def main(argv: list[str]) -> None:
    mode = argv[0] if argv else ""
    if mode == "run":
        run()
    elif mode in ("serve", "watchdog"):
        from sandbox.harness.init import serve, watchdog

        serve(run) if mode == "serve" else watchdog()
    else:
        sys.exit("usage: harness serve|watchdog|run")


if __name__ == "__main__":
    main(sys.argv[1:])
