"""Collect offline trajectories: K sessions per problem from a reference model (any litellm
model), C sessions at a time, each written to the store turn by turn (source `collect`).

Resumable: a problem's finished sessions (passed or unsolved) by the same model on the
same problem content count towards its K, so a rerun does only what is missing; sessions
that ended on an error are redone. With `share_first_turn` and a greedy first turn (temperature
0), the K sessions of a problem would all start with the same reply: one session runs it, the
others start from a copy of its turn 0 (their meta names it, `first_turn_from`) and sample only
their later turns. Generation and execution overlap because C sessions run
in threads: while one session's program runs in the sandbox, others wait on the model
server. `PhaseMeter` measures that overlap from the session events.

This module does not build datasets or filter trajectories; `trainer.data.dataset` does.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from assistant.console import to_stderr
from assistant.interfaces import ChatModel, Runner
from assistant.loop.recorder import record
from assistant.loop.session import Event, ProgramExtracted, Session, SessionEnded, TurnFinished, TurnStarted
from assistant.problems.schema import Problem
from assistant.store import atomic
from assistant.store.trajectory import MODEL_ERROR, PASSED, SANDBOX_ERROR, UNSOLVED
from assistant.store.trajectory_db import Store

if TYPE_CHECKING:
    from assistant.settings import LoopSettings

FINISHED = (PASSED, UNSOLVED)
ABORT_AFTER = 3  # default: consecutive sessions ending on the same kind of error stop the run


class PhaseMeter:
    """Counts sessions waiting on the model and sessions running programs, and integrates
    over time how much of the execution time had model requests in flight."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._phase: dict[str, str] = {}
        self.generating = self.executing = 0
        self._last = time.perf_counter()
        self.exec_s = self.gen_s = self.overlap_s = self.inflight_exec_s = 0.0
        self.max_inflight_while_exec = 0

    def _tick(self) -> None:
        now = time.perf_counter()
        dt, self._last = now - self._last, now
        if self.generating:
            self.gen_s += dt
        if self.executing:
            self.exec_s += dt
            self.inflight_exec_s += dt * self.generating
            if self.generating:
                self.overlap_s += dt

    def _set(self, sid: str, phase: str | None) -> None:
        self._tick()
        old = self._phase.pop(sid, None)
        self.generating -= old == "gen"
        self.executing -= old == "exec"
        if phase:
            self._phase[sid] = phase
            self.generating += phase == "gen"
            self.executing += phase == "exec"
        if self.executing:
            self.max_inflight_while_exec = max(self.max_inflight_while_exec, self.generating)

    def __call__(self, event: Event) -> None:
        with self._lock:
            if isinstance(event, TurnStarted):
                self._set(event.session_id, "gen")
            elif isinstance(event, ProgramExtracted):
                self._set(event.session_id, "exec" if event.program is not None else None)
            elif isinstance(event, (TurnFinished, SessionEnded)):
                self._set(event.session_id, None)

    def report(self) -> dict[str, float]:
        with self._lock:
            self._tick()
            return {
                "generating_s": round(self.gen_s, 2),
                "executing_s": round(self.exec_s, 2),
                "overlap_s": round(self.overlap_s, 2),
                "share_of_execution_with_requests_in_flight": round(self.overlap_s / self.exec_s, 3)
                if self.exec_s
                else 0.0,
                "mean_requests_in_flight_while_executing": round(self.inflight_exec_s / self.exec_s, 2)
                if self.exec_s
                else 0.0,
                "max_requests_in_flight_while_executing": self.max_inflight_while_exec,
            }


@dataclass
class CollectReport:
    planned: int = 0
    already_stored: int = 0
    statuses: Counter = field(default_factory=Counter)
    turns: int = 0
    shared_turns: int = 0  # first turns copied from a sibling session instead of generated
    wall_s: float = 0.0
    aborted: str | None = None
    overlap: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "planned": self.planned,
            "already_stored": self.already_stored,
            "statuses": dict(self.statuses),
            "turns": self.turns,
            "shared_turns": self.shared_turns,
            "wall_s": round(self.wall_s, 1),
            "aborted": self.aborted,
            "overlap": self.overlap,
        }


Done = Callable[[Problem, str], int]


def sampling_meta(settings: LoopSettings, full_horizon: bool) -> dict[str, Any]:
    """How a collected session was sampled (per-turn temperatures, top_p, turns, full horizon),
    stored with it so that a later collection counts only sessions sampled alike."""
    return {
        "collect": {
            "temperature": settings.temperature,
            "top_p": settings.top_p,
            "turns": settings.turns,
            "full_horizon": full_horizon,
        }
    }


def stored_alike(store: Store, sampling: dict[str, Any], source: str = "collect") -> Done:
    """The default reuse rule: finished sessions (passed or unsolved) of this model on this exact
    problem content from `source`, sampled as `sampling` (`sampling_meta`) says: the ceiling's
    recipe (`--first-temperature 0 --temperature 1.0 --turns 2`) after an ordinary collection
    runs its own sessions instead of counting the others."""

    def done(problem: Problem, model: str) -> int:
        digest = problem.content_hash()
        return sum(
            1
            for s in store.sessions(problem_id=problem.id, model=model, source=source)
            # a session stored before the sampling was recorded counts as before (it has no "collect")
            if s.problem_hash == digest
            and s.status in FINISHED
            and s.meta.get("collect", sampling["collect"]) == sampling["collect"]
        )

    return done


@dataclass
class Job:
    """One session to run: from scratch, or from a copy of `leader`'s turn 0; a job with
    `followers` releases that many more sessions of its problem once it has finished."""

    problem: Problem
    followers: int = 0
    leader: Session | None = None


def plan(
    problems: list[Problem], model: str, samples: int, done: Done, share_first: bool = False
) -> tuple[list[Job], int]:
    """The sessions still to run and how many are already stored. With `share_first` a
    problem's missing sessions are one leader job whose followers wait for its first turn."""
    jobs, stored = [], 0
    for problem in problems:
        have = min(samples, done(problem, model))
        stored += have
        missing = samples - have
        if share_first and missing > 1:
            jobs.append(Job(problem, followers=missing - 1))
        else:
            jobs.extend(Job(problem) for _ in range(missing))
    return jobs, stored


def followers_of(job: Job, session: Session) -> list[Job]:
    """The jobs a finished leader releases: from a copy of its turn 0 when it has one that ran
    (a model or sandbox error leaves none to share), else from scratch."""
    usable = bool(session.turns) and session.turns[0].program is not None
    return [Job(job.problem, leader=session if usable else None) for _ in range(job.followers)]


def _plan_lock(store: Store, source: str, model: str) -> Path:
    """The lock file of the collections of `model` with `source` into `store`'s database."""
    key = hashlib.sha256(f"{store.path.resolve()}\0{source}\0{model}".encode()).hexdigest()[:16]
    return store.path.parent / "locks" / f"collect-{key}.lock"


def collect(
    problems: list[Problem],
    client: ChatModel,
    sandbox: Runner,
    store: Store,
    settings: LoopSettings,
    *,
    samples: int,
    concurrency: int,
    source: str = "collect",
    done: Done | None = None,
    adapter_version: str | None = None,
    abort_after: int = ABORT_AFTER,
    full_horizon: bool = False,
    meta: dict[str, Any] | None = None,
    on_session: Callable[[Session], None] | None = None,
    on_plan: Callable[[int, int], None] | None = None,
    share_first_turn: bool = False,
    on_wait: Callable[[], None] | None = None,
) -> CollectReport:
    """Run the missing sessions (`done(problem, model)` says how many a problem already has;
    default `stored_alike`: sampled with these settings, which each session then stores);
    `on_plan(todo, stored)` is called once, `on_session` after each session. Stops submitting
    after `abort_after` sessions in a row end on the same kind of error (a dead server or
    sandbox). `full_horizon`: sessions take every turn, also after their public tests pass.
    `meta` is stored with each session.
    `share_first_turn`: with a greedy first turn, a problem's sessions share one (module doc).
    One collection of a model per source and store plans and runs at a time (`on_wait`, default a
    line on stderr, is called when another holds the lock): two at once counted the same stored
    sessions and each ran the missing ones, storing them twice."""
    waiting = f"another collection of {client.display_name} ({source}) runs on {store.path}; waiting for it to end ..."
    with atomic.exclusive(_plan_lock(store, source, client.display_name), on_wait or (lambda: to_stderr(waiting))):
        start = time.perf_counter()
        share = share_first_turn and settings.temperature_for(0) == 0
        if done is None:  # the default rule: sessions sampled alike, which say so in their meta
            sampling = sampling_meta(settings, full_horizon)
            done, meta = stored_alike(store, sampling, source), {**(meta or {}), **sampling}
        jobs, stored = plan(problems, client.display_name, samples, done, share)
        planned = sum(1 + j.followers for j in jobs)
        report = CollectReport(planned=planned, already_stored=stored)
        if on_plan:
            on_plan(planned, stored)
        meter = PhaseMeter()
        streak: list[str] = []
        live: set[Session] = set()
        stopping, lock = threading.Event(), threading.Lock()

        def one(job: Job) -> Session:
            session = record(
                Session(
                    job.problem,
                    client,
                    sandbox,
                    settings,
                    source=source,
                    adapter_version=adapter_version,
                    subscriber=meter,
                    stream=False,
                    meta={**(meta or {}), "first_turn_from": job.leader.id} if job.leader else meta,
                ),
                store,
            )
            with lock:
                live.add(session)
                if stopping.is_set():
                    session.interrupt()
            if job.leader is not None:
                session.seed(job.leader.turns[0])
            session.run(stop_on_pass=not full_horizon)
            with lock:
                live.discard(session)
            return session

        def interrupted() -> None:
            """Ctrl-C (or SIGTERM): no new session; each running one ends after its current turn, stored
            as `interrupted`, before the caller closes the store (a further Ctrl-C does not cut that short)."""
            pending.clear()
            stopping.set()
            with lock:
                for session in live:
                    session.interrupt()
            while running:
                try:
                    finished, _ = wait(running)
                except KeyboardInterrupt:
                    continue
                for future in finished:
                    running.pop(future)

        pending = list(reversed(jobs))
        running: dict[Future[Session], Job] = {}
        with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="collect") as pool:
            try:
                while pending or running:
                    while pending and len(running) < concurrency and not report.aborted:
                        job = pending.pop()
                        running[pool.submit(one, job)] = job
                    if not running:
                        break
                    finished, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in finished:
                        job = running.pop(future)
                        session = future.result()
                        if job.followers and not report.aborted:
                            pending.extend(followers_of(job, session))  # next to run: their turn 0 is done
                        report.shared_turns += job.leader is not None
                        report.statuses[session.status] += 1
                        report.turns += len(session.turns)
                        streak = streak + [session.status] if session.status in (MODEL_ERROR, SANDBOX_ERROR) else []
                        if len(streak) >= abort_after and len(set(streak[-abort_after:])) == 1 and not report.aborted:
                            report.aborted = session.error or session.status
                        if on_session:
                            on_session(session)
            except KeyboardInterrupt:
                interrupted()
                raise
        report.wall_s = time.perf_counter() - start
        report.overlap = meter.report()
        return report
