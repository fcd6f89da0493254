"""A directory replaced by `atomic.replace_dir` is whole at its path whenever the replacement is
cut short (Ctrl-C while the old one is removed): the new one, never half of the old."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant.store import atomic


def _dir(path: Path, files: dict[str, str]) -> Path:
    path.mkdir()
    for name, text in files.items():
        (path / name).write_text(text)
    return path


def test_ctrl_c_while_the_old_directory_is_removed_leaves_the_new_one_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    final = _dir(tmp_path / "model", {"a": "old", "b": "old", "MARKER": ""})
    staging = _dir(tmp_path / "model.partial-1", {"a": "new", "b": "new", "MARKER": ""})

    def interrupted(path: Any, ignore_errors: bool = False) -> None:
        if not Path(path).exists():
            return
        sorted(Path(path).iterdir())[0].unlink()  # one file gone, then Ctrl-C
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.shutil, "rmtree", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic.replace_dir(staging, final)
    assert {p.name: p.read_text() for p in final.iterdir()} == {"a": "new", "b": "new", "MARKER": ""}
    monkeypatch.undo()
    with atomic.building(final, progress=lambda _: None):  # the next builder clears what was left aside
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == [".model.lock", "model"]
