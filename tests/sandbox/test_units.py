"""Unit tests of harness and protocol pieces that need no Docker."""

from __future__ import annotations

import io
import json
import signal
import struct
import tarfile

import pytest

from sandbox.api import Limits, SandboxError, TestCase
from sandbox.harness.child import parse_record, record_bytes
from sandbox.harness.main import classify, to_json
from sandbox.protocol import Demux, _pack_project, assemble, prepare

LIMITS = {"timeout_s": 1.0, "memory_mb": 64, "output_bytes": 100, "workdir_mb": 8}


def test_a_record_counts_only_alone_and_with_its_nonce() -> None:
    ok = record_bytes("n1", "ok", "", 0, "", "", "")
    assert parse_record(ok, "n1")["o"] == "ok"
    assert parse_record(ok, "n2") is None  # wrong nonce
    assert parse_record(ok + ok, "n1") is None  # a second (forged) record
    assert parse_record(b"", "n1") is None
    nul = record_bytes("n1", "exc", "AssertionError", 1, "a\0b", "x", "")
    assert parse_record(nul, "n1")["a"] == "a\\x00b"  # NULs inside values are escaped


def test_classify_maps_outcomes_to_statuses() -> None:
    out = {"why": None, "code": 0}
    assert classify("stdio", out, None, LIMITS, False) == (None, "")
    assert classify("stdio", dict(out, code=1), None, LIMITS, False)[0] == "failed"
    assert classify("stdio", dict(out, code=1), {"o": "exc", "e": "ValueError"}, LIMITS, False)[0] == "error"
    assert classify("stdio", dict(out, code=-signal.SIGKILL), None, LIMITS, True)[0] == "memory"
    assert classify("stdio", dict(out, code=-signal.SIGKILL), None, LIMITS, False)[0] == "error"
    assert classify("stdio", dict(out, code=-signal.SIGXCPU), None, LIMITS, False)[0] == "timeout"
    assert classify("stdio", dict(out, why="output_limit"), None, LIMITS, False)[0] == "output_limit"
    assert classify("function", out, None, LIMITS, False)[0] == "error"  # no record: did not finish
    assert classify("function", out, {"o": "ok", "e": None}, LIMITS, False)[0] == "passed"
    assert classify("function", dict(out, code=3), {"o": "ok", "e": None}, LIMITS, False)[0] == "failed"
    assert classify("function", out, {"o": "exit", "e": None}, LIMITS, False)[0] == "error"
    # a value test is never "passed" in the harness: the host compares its value
    assert classify("function", out, {"o": "ok", "e": None}, LIMITS, False, value=True)[0] == "value"
    assert classify("function", out, {"o": "unplain", "e": None, "a": "x"}, LIMITS, False, value=True)[0] == "failed"


def test_to_json_is_json() -> None:
    obj = {"s": 'a "q" \n \udc80 é', "n": None, "b": [True, False], "f": 0.25, "i": -3}
    assert json.loads(to_json(obj)) == obj


def frame(kind: int, data: bytes) -> bytes:
    return bytes([kind, 0, 0, 0]) + struct.pack(">I", len(data)) + data


def test_demux_handles_frames_split_anywhere() -> None:
    stream = frame(1, b'{"status": "passed"}\n') + frame(2, b"oops") + frame(1, b'{"done": true}\n')
    for cut in range(len(stream)):
        demux = Demux()
        demux.feed(stream[:cut])
        assert not demux.finished() or cut == len(stream)
        demux.feed(stream[cut:])
        assert demux.finished() and bytes(demux.streams[2]) == b"oops"


def test_a_dead_harness_turns_into_errors_not_passes() -> None:
    job = prepare("print(1)", [TestCase(input="", output="1")] * 3, "stdio", Limits(), None, canaries=False)
    line = b'{"status": "passed", "stdout": "1\\n", "exit_code": 0}\n'
    outcome = assemble(job, line, b"")
    assert [t.status for t in outcome.result.tests] == ["passed", "error", "error"]
    assert outcome.recycle and not outcome.complete and outcome.fault is None
    crashed = assemble(job, b"", b"Traceback ...\nKeyError: 'kind'\n")
    assert crashed.fault and "KeyError" in crashed.fault


def test_packing_a_project_skips_a_file_removed_meanwhile_and_names_an_unreadable_one(tmp_path, monkeypatch) -> None:
    (tmp_path / "calc.py").write_text("x = 1\n")
    (tmp_path / "4913").write_text("")  # vim's probe file, gone by the time it is read
    real_add = tarfile.TarFile.add

    def add(self, name, *args, **kwargs):
        if name.endswith("4913"):
            raise FileNotFoundError(2, "No such file or directory")
        if name.endswith("secret.py"):
            raise PermissionError(13, "Permission denied")
        return real_add(self, name, *args, **kwargs)

    monkeypatch.setattr(tarfile.TarFile, "add", add)
    with tarfile.open(fileobj=io.BytesIO(_pack_project(str(tmp_path), 64)), mode="r:gz") as tar:
        assert tar.getnames() == ["calc.py"]
    (tmp_path / "secret.py").write_text("")
    with pytest.raises(SandboxError, match=r"cannot read .*secret.py to copy the project .*Permission denied"):
        _pack_project(str(tmp_path), 64)
    with pytest.raises(SandboxError, match="the project directory .*/typo does not exist"):
        _pack_project(str(tmp_path / "typo"), 64)


def test_the_host_waits_for_a_pytest_run_as_long_as_the_harness_may_take(tmp_path) -> None:
    """A pytest job of 12 named tests has 12 x 5 s in the harness; the host gave up at 57 s and an
    honest slow suite read as a killed harness instead of a timeout."""
    from sandbox.api import Project

    (tmp_path / "m.py").write_text("x = 1\n")
    limits = Limits(timeout_s=5.0, memory_mb=256, pids=64, cpus=1.0, output_bytes=65536, workdir_mb=32)
    tests = [TestCase(name=f"test_m.py::test_{i}") for i in range(12)]
    job = prepare("x = 1\n", tests, "pytest", limits, Project(str(tmp_path), "m.py"))
    assert job.deadline_s > 12 * 5.0 + 20.0
    single = prepare("x = 1\n", tests[:1], "pytest", limits, Project(str(tmp_path), "m.py"))
    assert single.deadline_s == 20.0 + 7.0 + 30.0  # one test: as before


def test_the_build_lock_is_left_usable_by_any_user_and_engine_errors_are_one_sentence(tmp_path, monkeypatch) -> None:
    """`sudo cobalt sandbox build` left a root-only 0644 lock: the next user's build failed with a
    PermissionError traceback. A Docker engine error during the build was a traceback too."""
    import os
    import types

    import docker

    from sandbox import image

    lock = tmp_path / "build.lock"
    lock.write_text("")
    lock.chmod(0o644)
    monkeypatch.setattr(image, "LOCK_PATH", str(lock))
    with image._build_lock():
        pass
    assert lock.stat().st_mode & 0o777 == 0o666

    def refused(**kwargs):
        raise docker.errors.APIError("500 Server Error: no space left on device")

    client = types.SimpleNamespace(api=types.SimpleNamespace(build=refused))
    with pytest.raises(SandboxError, match=r"^docker build of t:1 failed: the Docker engine said .*no space left"):
        image._docker_build(client, "FROM scratch\n", {}, "t:1", lambda _: None)
    assert os.path.exists(lock)


def test_wipe_empties_a_tree_nested_past_the_recursion_path_and_descriptor_limits(tmp_path) -> None:
    """A test can nest `a/a/a/...` a thousand deep in milliseconds; the recursive wipe gave up, the
    harness reported a fault, and the program's job (a forged one too) went unscored. Run under the
    container's own limit of open files, lowered further (a descriptor per level would not do)."""
    import os
    import subprocess
    import sys

    deep = tmp_path / "scratch"
    deep.mkdir()
    fd = os.open(deep, os.O_RDONLY)
    for _ in range(3000):  # 6,000 characters of path: past PATH_MAX as one string
        os.mkdir("a", dir_fd=fd)
        nxt = os.open("a", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    os.close(fd)
    (deep / "locked").mkdir()
    (deep / "locked" / "f").write_text("x")
    (deep / "locked").chmod(0)
    (deep / ".wipe-1").mkdir()  # a name the wipe might pick, taken
    (deep / ".wipe-1" / "g").write_text("y")
    (deep / "link").symlink_to(tmp_path)  # removed, not followed
    code = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64)); "
        "from sandbox.harness.proc import wipe; sys.exit(0 if wipe(sys.argv[1]) else 1)"
    )
    assert subprocess.run([sys.executable, "-c", code, str(deep)], timeout=120).returncode == 0
    assert list(deep.iterdir()) == [] and tmp_path.exists()


def test_the_read_cap_does_not_give_the_expected_outputs_length_away() -> None:
    """The child can walk up to its test's frame: `expected_len` 3 or 2 told `YES` from `NO`."""
    from sandbox.protocol import read_cap

    assert read_cap(len(b"YES\n")) == read_cap(len(b"NO\n")) == 8192
    assert read_cap(3000) == 16384 and all(read_cap(n) >= 2 * n + 4096 for n in (0, 1, 5000, 10**6))
