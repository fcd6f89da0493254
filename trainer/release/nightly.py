"""`cobalt retrain`, the nightly job: lock -> sessions since the last run -> bandit dataset ->
LoRA GRPO -> register -> gate against the base model and the current adapter -> promote only if shown not worse ->
hot-load under `<base>-v<N>` -> report.

Each step records its result in the run's `run.json` once it is finished; a rerun after a
crash (or a failure) resumes the unfinished run after its last recorded step, and training
resumes from its last checkpoint. The only step that changes what the assistant serves is
`promote`: one atomic replace of `adapters/current.json`, so a crash anywhere else leaves
the served adapter untouched. Too little new data skips the run without moving the window.
"""

from __future__ import annotations

import json
import shutil
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from assistant import runtime
from assistant.errors import UserError
from assistant.serving import hot_load
from assistant.settings import Settings
from trainer.data import build
from trainer.data.heldout import training_sessions
from trainer.data.session_source import sessions_from_store
from trainer.release.gate_serving import GateServing
from trainer.release.registry import Registry, merge_into_base
from trainer.release.retrain_report import write_report
from trainer.release.runstate import RetrainLock, RetrainState, Run, retrain_dir
from trainer.train_settings import TrainSettings
from trainer.training import grpo, launcher

Progress = Callable[[str], None]


class Retrain(GateServing):
    """One invocation, built from the loaded `config` (through `assistant.runtime`) and the
    trainer's `settings` for the chosen profile. `sandbox_factory()` opens the sandbox lazily
    (only steps that run programs need it; default: the configured one); `api_base` names a
    running server instead of the data dir's one; `config_file`: the `--config` file the settings
    came from, handed on to training ranks started under `accelerate launch`."""

    def __init__(
        self,
        config: Settings,
        settings: TrainSettings,
        *,
        model: str | None = None,
        api_base: str | None = None,
        sandbox_factory: Callable[[], Any] | None = None,
        progress: Progress = print,
        max_steps: int | None = None,
        config_file: str | None = None,
    ) -> None:
        self.config, self.settings, self.config_file = config, settings, config_file
        self.model = model or config.model.name
        self.api_base = api_base
        self.progress = progress
        self.max_steps = max_steps
        self.registry = Registry.open(config.paths)
        self.root = retrain_dir(config.paths)
        self.state = RetrainState(self.root)
        self._sandbox_factory = sandbox_factory
        self._sandbox: Any = None

    @property
    def sandbox(self) -> Any:
        if self._sandbox is None:
            if self._sandbox_factory is None:
                self._sandbox = runtime.open_sandbox(self.config)
            else:
                self._sandbox = self._sandbox_factory()
        return self._sandbox

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """The retrain lock (one job at a time on these cores); closes the sandbox it opened."""
        with RetrainLock(self.root):
            try:
                yield
            finally:
                if self._sandbox is not None and self._sandbox_factory is None:
                    self._sandbox.close()

    def run(self, fresh: bool = False) -> Run:
        with self._locked():
            return self._run(fresh)

    def gate(self, version: int, promote: bool = False) -> dict[str, Any]:
        """`cobalt adapters gate`: the nightly gate (and, with `promote`, its promotion) on an
        adapter registered by hand (`cobalt train --register`). Adapters the gate loaded into
        the server are unloaded again unless promoted."""
        with self._locked():
            decision = self.gate_version(version)
            promoted = self.promote_if_passed(version, decision, "adapters gate") if promote else {"promoted": False}
            api_base = self._running_api()
            keep = {decision["candidate"]} if promoted["promoted"] else set()
            if api_base is not None:
                for name in set(decision["loaded"]) - keep:
                    hot_load.unload_adapter(api_base, name)
                if promoted["promoted"]:  # a merged gate loaded nothing: the running server gets it now
                    self._ensure_loaded(api_base, decision["candidate"], self.registry.get(version).path)
            return {"gate": decision, "promote": promoted}

    def _run(self, fresh: bool) -> Run:
        run = self.state.unfinished()
        if run is not None and fresh:
            if run.done("promote") and run.steps["promote"].get("promoted"):  # its adapter, trained on the window,
                self.state.set_cutoff(float(run.window["until"] or time.time()))  # serves: not trained on again
            run.finish("abandoned", "abandoned with --fresh")
            run = None
        if run is not None:
            run.attempts += 1
            run.status, run.error = "running", None
            run.save()
            self.progress(
                f"resuming retrain run {run.id} after its last finished step ({', '.join(run.steps) or 'none'})"
            )
        else:
            run = self.state.new_run(self.model, self.settings.profile)
            self.progress(f"retrain run {run.id}: sessions since {_when(run.window['since'])}")
        self.model = run.model
        try:
            self._steps(run)
        except BaseException as exc:
            if run.status == "running":
                run.finish("failed", f"{type(exc).__name__}: {exc}")
            raise
        return run

    def _steps(self, run: Run) -> None:
        if not run.done("dataset"):
            run.record("dataset", self.step_dataset(run))
        data = run.steps["dataset"]
        if data.get("skip"):
            run.record("report", write_report(run, "skipped"))
            run.finish("skipped", data["skip"])
            self.progress(f"skipped: {data['skip']}")
            return
        if not run.done("train"):
            run.record("train", self.step_train(run))
        if not run.done("register"):
            run.record("register", self.step_register(run))
        if not run.done("gate"):
            decision = self.step_gate(run)
            if decision.get("incomplete"):  # a dead server or sandbox: not a verdict on the adapter
                run.finish("failed", "the gate's evaluations are incomplete: " + "; ".join(decision["incomplete"]))
                version = run.steps["register"]["version"]
                self.progress(f"the gate could not finish; the next `cobalt retrain` gates v{version} again")
                return  # unfinished: the next retrain resumes here, and the window is not closed
            run.record("gate", decision)
        if not run.done("promote"):
            run.record("promote", self.step_promote(run))
        if not run.done("hotload"):
            run.record("hotload", self.step_hotload(run))
        self.state.set_cutoff(float(run.window["until"] or time.time()))
        run.record("report", write_report(run, "done"))
        run.finish("done")
        self._cleanup(run)

    # --- steps ------------------------------------------------------------------------

    def step_dataset(self, run: Run) -> dict[str, Any]:
        ns = self.settings.nightly
        with runtime.open_store(self.config) as store:
            sessions = sessions_from_store(store, since=run.window["since"], until=run.window["until"])
        sessions = training_sessions(
            sessions, self.settings.dataset.sources, self.settings.dataset.split, self.config.eval.split
        )
        with_turns = [s for s in sessions if s.turns]
        if len(with_turns) < ns.min_sessions:
            return {
                "sessions": len(with_turns),
                "skip": f"{len(with_turns)} new sessions, fewer than nightly.min_sessions={ns.min_sessions}",
            }
        tokenizer = build.load_tokenizer(self.model, self.config.paths)
        built = build.build(
            sessions,
            run.path / "dataset",
            self.settings,
            tokenizer=tokenizer,
            sandbox=self.sandbox,
            loop=self.config.loop,
            model=self.model,
            extra_meta={"run": run.id, "window": run.window},
            progress=self.progress,
        )
        self.progress(
            f"dataset: {built.train_rows} training prompts, {built.validation_rows} validation "
            f"prompts from {len(with_turns)} sessions"
        )
        result = {"sessions": len(with_turns), **built.summary()}
        if built.train_rows < ns.min_prompts:
            result["skip"] = f"{built.train_rows} training prompts, fewer than nightly.min_prompts={ns.min_prompts}"
        return result

    def step_train(self, run: Run) -> dict[str, Any]:
        parent = self.registry.current(self.model) if self.settings.continue_from_current else None
        recorded = run.steps.get("train_parent")
        if recorded is not None:  # a resumed run keeps the parent it started from
            parent = self.registry.get(recorded["version"]) if recorded["version"] else None
        else:
            run.record("train_parent", {"version": parent.version if parent else None})
        if launcher.wants_launch(self.settings.launcher):
            return self._train_launched(run, parent)
        result = grpo.train(
            self.settings,
            model=self.model,
            dataset=run.path / "dataset",
            out=run.path / "training",
            paths=self.config.paths,
            sandbox=self.sandbox,
            parent=parent,
            max_steps=self.max_steps,
            progress=self.progress,
            sanitize=self.config.loop.sanitize_answers,
        )
        return {
            "adapter": str(result.adapter),
            "metrics": result.meta["metrics"],
            "parent_version": result.meta["parent_version"],
            "resumed_from": result.resumed_from,
        }

    def _train_launched(self, run: Run, parent: Any) -> dict[str, Any]:
        """Training as `launcher.num_processes` ranks under `accelerate launch` (trainer/training/launcher.py)."""
        argv = launcher.train_args(
            dataset=run.path / "dataset",
            out=run.path / "training",
            model=self.model,
            profile=self.settings.profile,
            parent=parent.version if parent else None,
            max_steps=self.max_steps,
            config=self.config_file,
        )
        code = launcher.run(self.settings.launcher, argv, self.progress)
        meta_path = run.path / "training" / "adapter" / grpo.ADAPTER_META
        if code != 0 or not meta_path.is_file():
            raise UserError(f"the launched training exited with code {code}; see its output above")
        meta = json.loads(meta_path.read_text())
        return {
            "adapter": str(meta_path.parent),
            "metrics": meta["metrics"],
            "parent_version": meta["parent_version"],
            "resumed_from": meta.get("resumed_from"),
        }

    def step_register(self, run: Run) -> dict[str, Any]:
        for version in self.registry.versions(self.model):  # registered before a crash
            if version.meta.get("run_id") == run.id:
                return {"version": version.version, "name": version.name}
        adapter = Path(run.steps["train"]["adapter"])
        meta = json.loads((adapter / grpo.ADAPTER_META).read_text())
        item = self.registry.register(adapter, {**meta, "run_id": run.id})
        self.progress(f"registered adapter v{item.version} ({item.name})")
        return {"version": item.version, "name": item.name}

    def step_gate(self, run: Run) -> dict[str, Any]:
        return self.gate_version(run.steps["register"]["version"])

    def step_promote(self, run: Run) -> dict[str, Any]:
        return self.promote_if_passed(run.steps["register"]["version"], run.steps["gate"], f"retrain {run.id}")

    def promote_if_passed(self, version: int, decision: dict[str, Any], why: str) -> dict[str, Any]:
        """Promote `version` when the gate's `decision` says so (recorded as `why: reason`)."""
        if not decision.get("promote"):
            return {"promoted": False, "reason": decision.get("reason")}
        current = self.registry.current(self.model)
        now = current.version if current is not None else None
        gated = decision.get("current_version", now)  # a decision recorded before the key existed: as now
        if now != version and now != gated:  # promoted meanwhile (another command, a shipped adapter)
            why = (
                f"the current adapter changed since the gate compared against it ({_named(gated)} then, "
                f"{_named(now)} now); gate v{version} again"
            )
            self.progress(f"not promoted: {why}")
            return {"promoted": False, "reason": why}
        if current is None or current.version != version:
            self.registry.promote(
                version, f"{why}: {decision['reason']}", merge=merge_into_base(self.config, self.progress)
            )
        self.progress(f"promoted adapter v{version}")
        return {"promoted": True, "version": version, "reason": decision["reason"]}

    def step_hotload(self, run: Run) -> dict[str, Any]:
        candidate = self.registry.get(run.steps["register"]["version"])
        api_base = self._running_api()
        if api_base is None:
            return {
                "loaded": None,
                "note": "no server is running; the assistant loads the current adapter when it starts",
            }
        loaded = candidate.name in hot_load.served_models(api_base)
        if not run.steps["promote"].get("promoted"):
            if loaded:  # loaded for the gate only
                hot_load.unload_adapter(api_base, candidate.name)
            return {"loaded": None}
        self._ensure_loaded(api_base, candidate.name, candidate.path)
        self.progress(f"serving {candidate.name} at {api_base}")
        return {"loaded": candidate.name, "api_base": api_base, "unloaded": self._unload_old(api_base, candidate)}

    def _cleanup(self, run: Run) -> None:
        shutil.rmtree(run.path / "training" / "checkpoints", ignore_errors=True)
        shutil.rmtree(run.path / "training" / "adapter", ignore_errors=True)  # kept in the registry
        datasets = [Path(str(v.meta["dataset"])) for v in self.registry.versions() if v.meta.get("dataset")]
        self.state.prune(self.settings.nightly.keep_runs, needed=datasets)


def _named(version: int | None) -> str:
    return f"v{version}" if version is not None else "the bare base model"


def _when(ts: float | None) -> str:
    return "the beginning" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
