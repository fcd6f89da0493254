"""The host's half of the harness protocol: job -> framed payload, hijacked Docker socket
exchange, harness JSON lines -> RunResult.

Frames are a 4-byte big-endian length and a marshal'd dict (format 4; cheap to load in
the harness, and the host is the one writing it): a header, then per test its input
and, for stdio, its expected output as a separate frame that the harness reads only after
the test's child has exited. Output is Docker's multiplexed stream (8-byte frame headers);
the harness writes one JSON line per test and `{"done": true}` last. A missing `done`
means the harness died: the test it was on and all later ones are errors, and the
container is recycled. The payload carries, for a value-shaped function test, only its
setup and call (sandbox/checks.py), and a hidden canary at a random place
(sandbox/canary.py); the host's verdict on the lines is sandbox/grading.py. Not here:
which container to use (sandbox/pool.py).
"""

from __future__ import annotations

import io
import json
import marshal
import os
import secrets
import socket
import struct
import tarfile
import threading
import time
from dataclasses import dataclass

from sandbox.api import KINDS, Limits, Project, RunResult, SandboxError, TestCase
from sandbox.canary import SKIP_DIRS, function_canary, pytest_canary, stdio_canary
from sandbox.checks import value_check
from sandbox.flags import scan
from sandbox.grading import error_tests, grade
from sandbox.prepared import Prepared

RECYCLE_STATUSES = {"timeout", "output_limit"}


def read_cap(expected_bytes: int) -> int:
    """Output bytes a test's run may produce before it is cut: twice the expected output and 4 KiB,
    rounded up to a power of two, so the cap does not give the expected length away."""
    need = 2 * expected_bytes + 4096
    return 1 << (need - 1).bit_length()


def frame(obj: dict) -> bytes:
    data = marshal.dumps(obj, 4)
    return struct.pack(">I", len(data)) + data


def prepare(
    program: str | bytes,
    tests: list,
    kind: str,
    limits: Limits,
    project: Project | None,
    canaries: bool = True,
    outside: bool = True,
) -> Prepared:
    """Validate a job and build its payload. Caller mistakes raise ValueError; a program
    that is not UTF-8 text becomes an `error` result, not an exception. `canaries`: add a
    hidden canary test; `outside`: judge value-shaped function tests here."""
    if kind not in KINDS:
        raise ValueError(f"unknown test kind {kind!r}: use one of {', '.join(KINDS)}")
    cases = [t if isinstance(t, TestCase) else TestCase.from_dict(t) for t in tests]
    for i, case in enumerate(cases):
        if kind == "stdio" and case.output is None:
            raise ValueError(f"stdio test {i + 1} has no expected output")
        if kind == "function" and not case.code:
            raise ValueError(f"function test {i + 1} has no assert snippet (code)")
    text = _program_text(program)
    if text is None:
        detail = "the program is not valid UTF-8 text"
        return Prepared(kind, cases, limits, b"", 0, RunResult(error_tests(cases, kind, detail), compile_error=detail))
    run_limits = {
        "timeout_s": float(limits.timeout_s),
        "memory_mb": int(limits.memory_mb),
        "output_bytes": int(limits.output_bytes),
        "workdir_mb": int(limits.workdir_mb),
    }
    header = {"kind": kind, "program": text, "limits": run_limits, "n": len(cases)}
    job = Prepared(kind, cases, limits, b"", 0.0, flags=scan(text))
    if kind == "pytest":
        if project is None:
            raise ValueError("the pytest kind needs a project (project_dir, target_file, test_command)")
        run_limits["timeout_s"] *= max(1, len(cases))
        job.pytest_canary = pytest_canary(project.project_dir) if canaries else None
        extra = {job.pytest_canary.path: job.pytest_canary.source} if job.pytest_canary else {}
        header.update(
            project=_pack_project(project.project_dir, limits.workdir_mb, extra),
            target_file=project.target_file,
            test_command=project.test_command,
            follow=project.follow or project.target_file,
            test_timeout_s=float(project.test_timeout_s),
            only=list(project.only),
            n=0,
        )
        job.payload = frame(header)
    else:
        tests_payload = _test_frames(job, canaries, outside)
        header["n"] = len(job.slots)
        job.payload = frame(header) + tests_payload
    if kind == "pytest":  # the harness's own limit (all named tests' time), then its report
        job.deadline_s = 20.0 + run_limits["timeout_s"] + 2.0 + 30.0
    else:
        job.deadline_s = 20.0 + (len(job.slots) or 1) * (limits.timeout_s + 2.0)
    return job


def _test_frames(job: Prepared, canaries: bool, outside: bool) -> bytes:
    """The tests' frames, a canary among them at a random place; fills job.slots and job.checks."""
    cases, kind = job.tests, job.kind
    job.checks = [value_check(c.code or "") if kind == "function" and outside else None for c in cases]
    wires: list[tuple[int, TestCase]] = list(enumerate(cases))
    canary = None
    if canaries and kind == "function":
        code = function_canary(cases, job.checks if outside else [value_check(c.code or "") for c in cases])
        canary = TestCase(code=code) if code else None
    elif canaries and kind == "stdio":
        canary = stdio_canary(cases)
    if canary is not None:
        wires.insert(secrets.randbelow(len(wires) + 1), (-1, canary))
    frames = []
    longest: dict[str, int] = {}  # stdio tests with one input share a run: read as much as the longest needs
    for case in cases:
        size = len((case.output or "").encode("utf-8", "surrogatepass"))
        longest[case.input or ""] = max(size, longest.get(case.input or "", 0))
    for slot, case in wires:
        check = job.checks[slot] if slot >= 0 else None
        code = check.child_code if check is not None else case.code
        expected = max(len((case.output or "").encode("utf-8", "surrogatepass")), longest.get(case.input or "", 0))
        # how much output to read, rounded up to a power of two: the expected output's own length would
        # tell a program in the child (it can walk up to this frame) `YES` from `NO`
        test = {"input": case.input or "", "code": code, "read_cap": read_cap(expected)}
        if check is not None:
            test["value"] = True
        frames.append(frame(test))
        if kind == "stdio":
            frames.append(frame({"expected": case.output}))
        job.slots.append(slot)
    return b"".join(frames)


def _program_text(program: str | bytes) -> str | None:
    try:
        text = program.decode("utf-8") if isinstance(program, (bytes, bytearray)) else str(program)
        text.encode("utf-8")  # lone surrogates are not text either
        return text
    except UnicodeError:
        return None


def _pack_project(project_dir: str, workdir_mb: int, extra: dict[str, str] | None = None) -> bytes:
    root = os.path.abspath(project_dir)
    if not os.path.isdir(root):
        raise SandboxError(f"the project directory {project_dir} does not exist")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                if not os.path.isfile(path) or os.path.islink(path) or name.endswith(".pyc"):
                    continue
                try:
                    tar.add(path, arcname=os.path.relpath(path, root), recursive=False)
                except FileNotFoundError:
                    continue  # removed while the project was packed (an editor's or a tool's temporary file)
                except OSError as exc:
                    raise SandboxError(
                        f"cannot read {path} to copy the project into the sandbox ({exc.strerror or exc})"
                    ) from None
        for name, text in (extra or {}).items():
            data = text.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
            tar.addfile(info, io.BytesIO(data))
    if buf.tell() > (workdir_mb << 20) // 2:
        raise SandboxError(
            f"project {project_dir} is {buf.tell() >> 20} MB packed, too big for the "
            f"{workdir_mb} MB work dir: raise sandbox.limits.workdir_mb or remove large files"
        )
    return buf.getvalue()


class Demux:
    """Incremental parser of Docker's multiplexed stream (non-TTY): 8-byte frame headers."""

    def __init__(self) -> None:
        self.pending = b""
        self.streams = {1: bytearray(), 2: bytearray()}

    def feed(self, data: bytes) -> None:
        buf, pos = self.pending + data, 0
        while pos + 8 <= len(buf):
            kind, size = buf[pos], struct.unpack(">I", buf[pos + 4 : pos + 8])[0]
            if pos + 8 + size > len(buf):
                break
            self.streams.setdefault(kind, bytearray()).extend(buf[pos + 8 : pos + 8 + size])
            pos += 8 + size
        self.pending = buf[pos:]

    def finished(self) -> bool:
        """The harness wrote its last line (`done`, or PID 1's `worker_died`)."""
        out = self.streams[1]
        return out.endswith(DONE_LINE) or (out.endswith(b"}\n") and WORKER_DIED in out[-64:])


DONE_LINE, WORKER_DIED = b'{"done": true}\n', b'{"worker_died":'


def exchange(sock, payload: bytes, timeout_s: float, half_close: bool = True) -> tuple[bytes, bytes, bool]:
    """Send the payload on a hijacked Docker socket and read the multiplexed output until
    the harness's last line or EOF. `half_close` (exec, one-shot run) signals the end of
    stdin; an attach socket to a serving PID 1 must stay open. Returns (stdout, stderr,
    finished) where finished means the last line or EOF arrived before the deadline."""
    raw: socket.socket = getattr(sock, "_sock", sock)
    deadline = time.monotonic() + timeout_s
    raw.settimeout(timeout_s)
    writer = threading.Thread(target=_send, args=(raw, payload, half_close), daemon=True)
    if len(payload) > 65536:  # a big payload must not block reading the replies
        writer.start()
    else:
        _send(raw, payload, half_close)
    demux, finished = Demux(), False
    try:
        while not finished:
            raw.settimeout(max(0.01, deadline - time.monotonic()))
            data = raw.recv(1 << 16)
            finished = not data
            demux.feed(data)
            finished = finished or demux.finished()
    except (socket.timeout, OSError):
        pass
    if writer.is_alive():
        writer.join(timeout=1.0)
    return bytes(demux.streams[1]), bytes(demux.streams[2]), finished


def close_hijacked(sock) -> None:
    """Close a hijacked Docker socket now (not at the next garbage collection): the
    SocketIO wrapper, the socket under it and the HTTP response that holds them."""
    for part in (getattr(sock, "_response", None), sock, getattr(sock, "_sock", None)):
        try:
            if part is not None:
                part.close()
        except (OSError, ValueError, AttributeError):
            pass


def _send(raw: socket.socket, payload: bytes, half_close: bool) -> None:
    try:
        raw.sendall(payload)
        if half_close:
            raw.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # the harness stopped reading (e.g. a compile error); its output says why


@dataclass
class Outcome:
    result: RunResult
    recycle: bool  # the container must not serve another job
    fault: str | None = None  # the sandbox itself failed: retry elsewhere
    complete: bool = True  # the harness reached its end
    killed: bool = False  # PID 1 saw the job's worker die (the program's doing, most likely)


def assemble(job: Prepared, out: bytes, err: bytes) -> Outcome:
    """Harness output -> Outcome. A harness that vanished without a word on stderr was
    killed (by the program, most likely); one that printed a traceback is a sandbox fault."""
    lines, compile_error, done, fatal, killed = [], None, False, None, False
    for line in out.decode("utf-8", "replace").splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if "compile_error" in obj:
            compile_error = obj["compile_error"]
        elif "fatal" in obj:
            fatal = obj["fatal"]
        elif obj.get("done"):
            done = True
        elif "worker_died" in obj:
            killed = True
        elif "status" in obj:
            lines.append(obj)
    if fatal or (not done and err.strip()):
        return Outcome(RunResult(), True, fatal or _harness_error(err), False)
    if compile_error is not None:
        detail = "the program is not valid Python"
        result = RunResult(
            error_tests(job.tests, job.kind, detail, compile_error), compile_error=compile_error, flags=list(job.flags)
        )
        return Outcome(result, False)
    tests, tampered, extra = grade(job, lines, done)
    recycle = not done or any(
        o["status"] in RECYCLE_STATUSES or (o.get("exit_code") or 0) < 0 or o.get("clean") is False for o in lines
    )
    result = RunResult(tests, tampered=tampered, flags=job.flags + extra)
    return Outcome(result, recycle, None, done, killed)


def _harness_error(err: bytes) -> str:
    text = err.decode("utf-8", "replace").strip()
    return f"the sandbox harness failed: {text.splitlines()[-1] if text else 'no output'}"
