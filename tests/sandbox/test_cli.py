"""`cobalt sandbox build|check|run` and `cobalt bench sandbox`, in process, on the real engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.cli import main
from tests.sandbox.cases import bench_argv

pytestmark = pytest.mark.docker


def write(path: Path, data: str | bytes) -> str:
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return str(path)


@pytest.fixture
def add_files(tmp_path: Path) -> tuple[str, str]:
    program = write(tmp_path / "add.py", "a, b = map(int, input().split())\nprint(a + b)\n")
    tests = write(
        tmp_path / "tests.json", json.dumps([{"input": "1 2\n", "output": "3\n"}, {"input": "2 2\n", "output": "5\n"}])
    )
    return program, tests


def test_run_json_shape_and_exit_zero_on_failures(add_files, capsys, docker_client) -> None:
    program, tests = add_files
    assert main(["sandbox", "run", "--program", program, "--tests", tests, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pass_rate"] == 0.5
    assert [t["status"] for t in out["tests"]] == ["passed", "failed"]
    assert out["tests"][1]["actual"] == "4\n"


def test_run_human_output(add_files, capsys, docker_client) -> None:
    program, tests = add_files
    assert main(["sandbox", "run", "--program", program, "--tests", tests]) == 0
    out = capsys.readouterr().out
    assert "test 2: failed" in out and "passed 1/2" in out


def test_run_function_kind(tmp_path: Path, capsys, docker_client) -> None:
    program = write(tmp_path / "f.py", "def add(a, b):\n    return a * b\n")
    cases = [{"code": "assert add(2, 2) == 4"}, {"code": "assert add(1, 2) == 3"}]
    tests = write(tmp_path / "t.json", json.dumps(cases))
    assert main(["sandbox", "run", "--program", program, "--tests", tests, "--kind", "function", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [t["status"] for t in out["tests"]] == ["passed", "failed"] and out["tests"][1]["actual"] == "2"


def test_run_shows_a_forged_run_as_tampered(tmp_path: Path, capsys, docker_client) -> None:
    program = write(tmp_path / "f.py", "import sys\ndef add(a, b):\n    return sys._getframe(1).f_code.co_consts[-2]\n")
    tests = write(tmp_path / "t.json", json.dumps([{"code": "assert add(2, 2) == 4"}]))
    assert main(["sandbox", "run", "--program", program, "--tests", tests, "--kind", "function"]) == 0
    out = capsys.readouterr().out
    assert "tampered: a hidden canary test passed" in out and "flags (signals, not failures): frames" in out
    assert "test 1: tampered" in out and "passed 0/1" in out


@pytest.mark.parametrize(
    "content, message",
    [
        ('[{"input": "1", "output": "1"', "is not valid JSON"),
        ('{"input": "1", "output": "1"}', "must hold a JSON list"),
        ('[{"input": "1"}]', "needs either {input, output} or {code}"),
        ('[{"stdin": "1", "output": "1"}]', "unknown test case field"),
        ('[{"input": 1, "output": "1"}]', "must be a string"),
    ],
)
def test_malformed_tests_json_is_one_sentence(add_files, tmp_path: Path, capsys, content: str, message: str) -> None:
    program, _ = add_files
    tests = write(tmp_path / "bad.json", content)
    assert main(["sandbox", "run", "--program", program, "--tests", tests]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("cobalt: error: tests file") and message in err and "\n" not in err
    assert "Traceback" not in err


def test_missing_files_are_one_sentence(add_files, capsys) -> None:
    program, tests = add_files
    assert main(["sandbox", "run", "--program", "/nonexistent.py", "--tests", tests]) == 1
    assert "cannot read the program file" in capsys.readouterr().err
    assert main(["sandbox", "run", "--program", program, "--tests", "/nonexistent.json"]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_non_utf8_program_is_an_error_result(add_files, tmp_path: Path, capsys, docker_client) -> None:
    _, tests = add_files
    program = write(tmp_path / "bin.py", b"\xff\xfe\x00print(3)\n")
    assert main(["sandbox", "run", "--program", program, "--tests", tests, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [t["status"] for t in out["tests"]] == ["error", "error"] and "UTF-8" in out["compile_error"]


def test_build_is_idempotent_and_check_smoke_runs(capsys, docker_client) -> None:
    assert main(["sandbox", "build"]) == 0
    assert "is up to date" in capsys.readouterr().out
    assert main(["sandbox", "check"]) == 0
    out = capsys.readouterr().out
    assert "engine: Docker" in out and "smoke run: passed" in out


def test_check_without_engine_is_one_sentence(monkeypatch, capsys) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    assert main(["sandbox", "check"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("cobalt: error: cannot reach the Docker engine") and "\n" not in err


def test_bench_runs_on_tiny_sizes(capsys, docker_client) -> None:
    assert main(bench_argv("--programs 3 --tests 2 --per-test-programs 1 --concurrency 2 --grading 1")) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["all_correct"] is True
    grading = report["grading"]  # guards on vs off, same pool, same run
    assert [r["way"] for r in grading["rows"]] == [
        "pool stdio, guards off",
        "pool stdio, guards on",
        "pool function, guards off",
        "pool function, guards on",
    ]
    assert all(r["tests"] == r["passed"] == 6 and r["tampered"] == 0 for r in grading["rows"])
    assert set(grading["ratios"]) == {"stdio_on_vs_off", "function_on_vs_off"}
    assert [w["way"] for w in report["ways"]] == [
        "warm pool (run_many)",
        "pool, docker exec/program",
        "docker run per program",
        "docker run per test",
        "bare python3 per test",
    ]
    assert [w["tests"] for w in report["ways"]] == [6, 6, 6, 2, 6]
    assert set(report["ratios"]) == {
        "pool_vs_docker_run_per_test",
        "pool_vs_docker_run_per_program",
        "pool_vs_bare_python",
        "pool_vs_pool_with_docker_exec",
    }
