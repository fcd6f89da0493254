"""Persistent state of `cobalt retrain`, in `<data>/retrain/`:

    .lock                  held (flock) while a retrain runs; the kernel frees it on any death
    owner.json             pid and start time of the holder, for the refusal sentence
    state.json             {"last_cutoff": time of the last finished run's window end}
    runs/<id>/run.json     one run: its window, status and the result of each finished step

Every write replaces its file atomically, so a crash at any moment leaves the last
finished step recorded and the next run resumes after it.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

from filelock import FileLock, Timeout

from assistant.errors import UserError
from assistant.settings import PathsSettings
from assistant.store import atomic

FINISHED = ("done", "skipped", "abandoned")


def retrain_dir(paths: PathsSettings | None) -> Path:
    path = (paths or PathsSettings()).data_dir / "retrain"
    (path / "runs").mkdir(parents=True, exist_ok=True)
    return path


class RetrainLock:
    """An exclusive, non-blocking lock; a second holder gets one sentence."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.lock = FileLock(str(root / ".lock"), timeout=0)

    def __enter__(self) -> "RetrainLock":
        try:
            self.lock.acquire()
        except Timeout:
            raise UserError(
                f"another `cobalt retrain` is already running ({self._holder()}); "
                "this one exits without changing anything"
            ) from None
        atomic.write_json(self.root / "owner.json", {"pid": os.getpid(), "started_at": time.time()})
        return self

    def __exit__(self, *exc: Any) -> None:
        self.lock.release()

    def _holder(self) -> str:
        try:
            owner = json.loads((self.root / "owner.json").read_text())
            since = datetime.fromtimestamp(owner["started_at"]).strftime("%Y-%m-%d %H:%M:%S")
            return f"pid {owner['pid']}, since {since}"
        except (OSError, ValueError, KeyError):
            return "another process holds the lock"


@dataclass
class Run:
    """One retrain run; `steps[name]` is the recorded result of a finished step."""

    path: Path
    id: str
    status: str = "running"
    started_at: float = field(default_factory=time.time)
    window: dict[str, float | None] = field(default_factory=dict)
    model: str = ""
    profile: str = ""
    steps: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    attempts: int = 1
    finished_at: float | None = None

    def done(self, step: str) -> bool:
        return step in self.steps

    def record(self, step: str, result: Any) -> None:
        self.steps[step] = result
        self.save()

    def finish(self, status: str, error: str | None = None) -> None:
        self.status, self.error, self.finished_at = status, error, time.time()
        self.save()

    def save(self) -> None:
        data = {k: v for k, v in self.__dict__.items() if k != "path"}
        atomic.write_json(self.path / "run.json", data)

    @classmethod
    def load(cls, path: Path) -> "Run":
        data = json.loads((path / "run.json").read_text())
        return cls(path=path, **data)


class RetrainState:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.runs_dir = root / "runs"

    def last_cutoff(self) -> float | None:
        try:
            return json.loads((self.root / "state.json").read_text()).get("last_cutoff")
        except (FileNotFoundError, ValueError):
            return None

    def set_cutoff(self, value: float) -> None:
        atomic.write_json(self.root / "state.json", {"last_cutoff": value, "updated_at": time.time()})

    def runs(self) -> list[Run]:
        found = []
        for path in self.runs_dir.iterdir():
            if (path / "run.json").is_file():
                try:
                    found.append(Run.load(path))
                except (ValueError, TypeError):
                    continue
        return sorted(found, key=lambda r: (r.started_at, r.id))

    def unfinished(self) -> Run | None:
        """The newest run that neither finished nor was abandoned (crashed or failed)."""
        pending = [r for r in self.runs() if r.status not in FINISHED]
        return pending[-1] if pending else None

    def new_run(self, model: str, profile: str) -> Run:
        now = time.time()
        stem = datetime.fromtimestamp(now).strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
        run_id, n = stem, 1
        while (self.runs_dir / run_id).exists():  # a second run of this process within the same second
            run_id, n = f"{stem}-{n}", n + 1
        path = self.runs_dir / run_id
        path.mkdir(parents=True)
        run = Run(
            path=path,
            id=run_id,
            started_at=now,
            window={"since": self.last_cutoff(), "until": now},
            model=model,
            profile=profile,
        )
        run.save()
        return run

    def prune(self, keep: int, needed: Iterable[Path] = ()) -> None:
        """Remove all but the newest `keep` finished runs, except those holding a path in `needed`
        (a registered adapter's dataset: `cobalt adapters export` copies it from there)."""
        held = [Path(p).resolve() for p in needed]
        finished = [r for r in self.runs() if r.status in FINISHED]
        for run in finished[: max(0, len(finished) - keep)]:
            if any(run.path.resolve() in path.parents or path == run.path.resolve() for path in held):
                continue
            shutil.rmtree(run.path, ignore_errors=True)
