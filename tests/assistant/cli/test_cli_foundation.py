"""The `cobalt` entry point: bad input gives one sentence on stderr, exit 1, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def run_cli(*args: str, home: Path, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, COBALT_HOME=str(home), **(extra_env or {}))
    env.pop("COBALT_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "assistant.cli", *args], capture_output=True, text=True, env=env, timeout=300
    )


def assert_one_sentence(proc: subprocess.CompletedProcess, fragment: str) -> None:
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.strip().splitlines() if line.startswith("cobalt: error:")]
    assert len(lines) == 1 and fragment in lines[0], proc.stderr


@pytest.mark.parametrize(
    "args, fragment",
    [
        (("serve", "--model", "no-such-model", "--detach"), "unknown model"),
        (("serve", "--model", "./missing/dir", "--detach"), "no model checkpoint"),
        (("models", "prepare", "no-such-model"), "unknown built-in model"),
        (("models", "import", "/nonexistent.gguf", "--name", "x"), "does not exist"),
    ],
)
def test_bad_model_input(tmp_path: Path, args: tuple[str, ...], fragment: str) -> None:
    assert_one_sentence(run_cli(*args, home=tmp_path), fragment)


def test_busy_port_from_cli(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        proc = run_cli("serve", "--model", "tiny", "--port", str(port), "--detach", home=tmp_path)
    assert_one_sentence(proc, "busy")


def test_bad_config_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("server: [unclosed")
    assert_one_sentence(run_cli("--config", str(bad), "models", "list", home=tmp_path), "not valid YAML")


def test_env_override_reaches_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from assistant.settings_loader import load_settings

    monkeypatch.setenv("COBALT__SERVER__PORT", "8100")
    monkeypatch.setenv("COBALT__LOOP__TURNS", "2")
    cfg = load_settings()
    assert cfg.server.port == 8100 and cfg.loop.turns == 2
    assert cfg.server.host == "127.0.0.1"  # untouched keys survive the merge


def test_nested_env_override_and_file_layers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from assistant.errors import ConfigError
    from assistant.settings_loader import load_settings

    config = tmp_path / "cobalt.yaml"
    config.write_text("sandbox:\n  limits:\n    memory_mb: 256\n    timeout_s: 3\ntrain:\n  gate:\n    turns: 5\n")
    for name in [n for n in os.environ if n.upper().startswith("COBALT__")]:
        monkeypatch.delenv(name)  # e.g. the suite's empty ship directory
    monkeypatch.setenv("COBALT__SANDBOX__LIMITS__TIMEOUT_S", "2.5")
    monkeypatch.setenv("COBALT__TRAIN__GRPO__MAX_STEPS", "7")
    settings = load_settings(config)
    assert settings.sandbox.limits.timeout_s == 2.5  # the variable wins over the file
    assert settings.sandbox.limits.memory_mb == 256 and settings.sandbox.limits.pids == 64  # file, default
    assert settings.loop.timeout_s == 2.5  # the loop quotes the sandbox's per-test timeout
    assert settings.train == {"gate": {"turns": 5}, "grpo": {"max_steps": 7}}
    # the trainer owns the train: section; its check (a cobalt.settings entry point) runs at load
    config.write_text("train:\n  gate:\n    sampels: 5\n")
    with pytest.raises(ConfigError, match="unknown key\\(s\\) sampels in 'gate'"):
        load_settings(config)
    config.write_text("train:\n  epochs: 5\n")
    with pytest.raises(ConfigError, match="config section train: unknown key\\(s\\) epochs"):
        load_settings(config)


def test_cobalt_home_places_data_and_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from assistant.settings_loader import load_settings

    monkeypatch.delenv("COBALT_CACHE", raising=False)
    monkeypatch.setenv("COBALT_HOME", str(tmp_path / "home"))
    settings = load_settings()
    assert settings.paths.data_dir == tmp_path / "home" and settings.paths.data_dir.is_dir()
    assert settings.paths.cache_dir == tmp_path / "home" / "cache"
    monkeypatch.setenv("COBALT__PATHS__DATA_DIR", str(tmp_path / "elsewhere"))
    assert load_settings().paths.data_dir == tmp_path / "elsewhere"  # an explicit setting wins


def test_a_relative_home_is_made_absolute_and_free_text_stays_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Servers start in the data dir, where a relative path names another place; a free-form value
    that is no YAML (a glob, an unclosed list) is its text, not a traceback."""
    from assistant.settings_loader import load_settings

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COBALT_CACHE", raising=False)
    monkeypatch.setenv("COBALT_HOME", "rel")
    monkeypatch.setenv("COBALT__TRAIN__GRPO__RUN_NAME", "*.jsonl")
    monkeypatch.setenv("COBALT__TRAIN__GRPO__LR", "[1,")
    settings = load_settings()
    assert settings.paths.data_dir == tmp_path / "rel" and settings.paths.cache_dir == tmp_path / "rel" / "cache"
    assert settings.train["grpo"] == {"run_name": "*.jsonl", "lr": "[1,"}


@pytest.mark.parametrize(
    "name, value, fragment",
    [
        ("COBALT__SANDBOX__POOL_SIZE", "x", "config key sandbox.pool_size: must be an integer, got 'x'"),
        ("COBALT__LOOP__TOP_P", "lots", "config key loop.top_p: must be a number, got 'lots'"),
        ("COBALT__SANDBOX__LIMITS__TIMEOUT_S", "soon", "config key sandbox.limits.timeout_s: must be a number"),
        ("COBALT__SERVER__PORTT", "1", "config key server.portt: is not a known setting"),
        ("COBALT__SEVER__PORT", "8100", "COBALT__SEVER__PORT: there is no settings section 'sever'"),
    ],
)
def test_bad_value_names_the_key_in_one_sentence(tmp_path: Path, name: str, value: str, fragment: str) -> None:
    assert_one_sentence(run_cli("models", "list", home=tmp_path, extra_env={name: value}), fragment)


def test_bad_value_in_a_config_file(tmp_path: Path) -> None:
    config = tmp_path / "cobalt.yaml"
    config.write_text("collect:\n  samples: many\n")
    assert_one_sentence(
        run_cli("--config", str(config), "models", "list", home=tmp_path),
        "config key collect.samples: must be an integer, got 'many'",
    )


def test_class_defaults_match_the_shipped_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    """The section classes' defaults document configs/default.yaml and eval.yaml faithfully."""
    from assistant.settings import Settings
    from assistant.settings_loader import load_settings

    for name in [n for n in os.environ if n.upper().startswith("COBALT__")]:
        monkeypatch.delenv(name)
    assert Settings().model_dump() == load_settings().model_dump()


def test_unreadable_settings_are_one_sentence(tmp_path: Path) -> None:
    listed = run_cli("models", "list", home=tmp_path, extra_env={"COBALT__LOOP__TEMPERATURE": "0.2,0.6"})
    assert_one_sentence(listed, "a list or mapping setting takes JSON")
    assert_one_sentence(run_cli("--config", str(tmp_path), "models", "list", home=tmp_path), "cannot be read")
    (tmp_path / "a-file").write_text("")
    assert_one_sentence(run_cli("models", "list", home=tmp_path / "a-file" / "home"), "cannot create")


def test_a_port_out_of_range_is_refused_by_the_parser(tmp_path: Path) -> None:
    proc = run_cli("serve", "--port", "70000", "--detach", home=tmp_path)
    assert proc.returncode == 2 and "'70000' is not a port (1-65535)" in proc.stderr and "Traceback" not in proc.stderr


SIGTERMED = """
import os, signal, sys, time
import assistant.cli as cli

def command(args, settings):
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)
        return 0
    finally:
        print("server stopped", flush=True)

real = cli.build_parser

def parser():  # the real parser, with one command more
    built = real()
    sub = next(a for a in built._actions if a.dest == "command")
    sub.add_parser("sleepy").set_defaults(func=command)
    return built

cli.build_parser = parser
sys.exit(cli.main(["sleepy"]))
"""


def test_sigterm_to_any_command_runs_its_finally_and_exits_130(tmp_path: Path) -> None:
    """`timeout 6h cobalt retrain`: SIGTERM used to end the process at once, past the `finally`
    that stops the gate's private model server (gigabytes left running for good)."""
    env = {**os.environ, "COBALT_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", SIGTERMED], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 130 and done.stdout == "server stopped\n", done
    assert "cobalt: interrupted" in done.stderr
