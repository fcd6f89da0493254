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
from assistant.serving import hot_load, models, server
from assistant.serving.adapters import served_base_name
from assistant.serving.chat import ChatClient
from assistant.settings import Settings
from trainer.data import build
from trainer.data.heldout import training_sessions
from trainer.data.session_source import sessions_from_store
from trainer.release import gate
from trainer.release.merge import merge_adapter
from trainer.release.registry import AdapterVersion, Registry, merge_into_base
from trainer.release.retrain_report import write_report
from trainer.release.runstate import RetrainLock, RetrainState, Run, retrain_dir
from trainer.train_settings import TrainSettings
from trainer.training import grpo, launcher

Progress = Callable[[str], None]


class Retrain:
    """One invocation, built from the loaded `config` (through `assistant.runtime`) and the
    trainer's `settings` for the chosen profile. `sandbox_factory()` opens the sandbox lazily
    (only steps that run programs need it; default: the configured one); `api_base` names a
    running server instead of the data dir's one."""

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
    ) -> None:
        self.config, self.settings = config, settings
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
            run.record("gate", self.step_gate(run))
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

    def _server(self) -> tuple[str, str]:
        """(api_base, served base name) of the server the gate and hot-loading use."""
        if self.api_base:
            names = hot_load.served_models(self.api_base)
            base = served_base_name(self.model)
            if base not in names:
                raise UserError(f"the server at {self.api_base} serves {', '.join(names)}, not {base}")
            return self.api_base, base
        info = server.running(self.config.paths)
        if info is not None and info.merged:
            raise UserError(
                f"the running server serves adapter {info.merged} merged into {info.model}; the gate "
                "needs the bare base model: stop it with `cobalt serve --stop` before retraining"
            )
        if info is None:
            if not self.settings.nightly.start_server:
                raise UserError("no model server is running for the gate; start one with `cobalt serve --detach`")
            info = server.ensure(self.config.server, self.config.paths, self.model, progress=self.progress)
        if info.model != served_base_name(self.model):
            raise UserError(
                f"the running server serves {info.model}, not {self.model}; "
                "stop it with `cobalt serve --stop` or retrain that model"
            )
        return info.api_base, info.model

    def _client(self, api_base: str, name: str) -> ChatClient:
        tokenizer = models.resolve(self.model, self.config.paths) if self.config.model.suppress_docstrings else None
        return runtime.served_client(self.config, api_base, name, tokenizer)

    def _ensure_loaded(self, api_base: str, name: str, path: Path) -> bool:
        """Load adapter `name` unless the server has it; True when it was loaded now."""
        if name in hot_load.served_models(api_base):
            return False
        hot_load.load_adapter(api_base, name, path)
        return True

    def _adapter_arm(self, label: str, api_base: str, item: AdapterVersion, loaded: list[str]) -> gate.Arm:
        """The gate's arm of adapter `item`: with `gate.serve_merged`, its merged checkpoint (made
        now if missing) served by a server of its own during the arm's turn; else hot-loaded into
        the base server (its name added to `loaded` when it was loaded now)."""
        if not self.settings.gate.serve_merged:
            if self._ensure_loaded(api_base, item.name, item.path):
                loaded.append(item.name)
            return gate.Arm(label, self._client(api_base, item.name), item.name)
        checkpoint = merge_adapter(item.path, models.resolve(item.base_model, self.config.paths), self.progress)

        @contextmanager
        def serve() -> Iterator[ChatClient]:
            with server.serving(self.config.server, self.config.paths, checkpoint, item.name, self.progress) as info:
                yield self._client(info.api_base, item.name)

        return gate.Arm(label, None, item.name, serve)

    def step_gate(self, run: Run) -> dict[str, Any]:
        return self.gate_version(run.steps["register"]["version"])

    def gate_version(self, version: int) -> dict[str, Any]:
        """The gate's decision on registered adapter `version` (`trainer.release.gate`: the val repair
        items and the val natural tasks, turn-0 and last-turn Pass@1), against the base model and the
        current adapter, each served merged in its turn (`gate.serve_merged`) or hot-loaded into the
        base server when it lacks them. Saved as v<N>/gate.json."""
        gs = self.settings.gate
        api_base, base = self._server()
        candidate = self.registry.get(version)
        if candidate.base_model != self.model:
            raise UserError(f"v{version} is an adapter of {candidate.base_model}, not of {self.model}")
        current = self.registry.current(self.model)
        if current is not None and current.version == version:
            current = None  # the current adapter itself: it is compared with the base model only
        loaded: list[str] = []
        references = [gate.Arm("base", self._client(api_base, base))]
        if current is not None:
            references.append(self._adapter_arm("current", api_base, current, loaded))
        es = self.config.eval
        item_sets = gate.gate_item_sets(gs, es)
        problems = gate.gate_problems(gs, es)
        self.progress(
            f"gate: {candidate.name} vs {', '.join(r.name for r in references)} on "
            f"{' + '.join(f'{len(v)} {k}' for k, v in item_sets.items())} items of the {gs.split} split "
            f"({gs.turns} turn(s)) and "
            f"{len(problems)} {'+'.join(gs.natural.benchmarks)} tasks of it ({gs.natural.turns} turns), greedy"
        )
        with runtime.open_store(self.config) as store:
            arm = self._adapter_arm("candidate", api_base, candidate, loaded)
            report = gate.compare(
                item_sets, problems, references, arm, self.sandbox, store, gs, self.config.loop, es, self.progress
            )
        decision = {
            **report.to_dict(),
            "current": current.name if current else base,
            "candidate": candidate.name,
            "loaded": loaded,
        }
        self.progress(gate.gate_table(decision))
        self.progress(("promote: " if report.promote else "keep the current model: ") + report.reason)
        self.registry.record_gate(version, decision)
        return decision

    def step_promote(self, run: Run) -> dict[str, Any]:
        return self.promote_if_passed(run.steps["register"]["version"], run.steps["gate"], f"retrain {run.id}")

    def promote_if_passed(self, version: int, decision: dict[str, Any], why: str) -> dict[str, Any]:
        """Promote `version` when the gate's `decision` says so (recorded as `why: reason`)."""
        if not decision.get("promote"):
            return {"promoted": False, "reason": decision.get("reason")}
        current = self.registry.current(self.model)
        if current is None or current.version != version:
            self.registry.promote(
                version, f"{why}: {decision['reason']}", merge=merge_into_base(self.config, self.progress)
            )
        self.progress(f"promoted adapter v{version}")
        return {"promoted": True, "version": version, "reason": decision["reason"]}

    def _running_api(self) -> str | None:
        """The api_base of a server already running the base model (none is started)."""
        if self.api_base:
            return self.api_base
        info = server.running(self.config.paths)
        usable = info is not None and info.model == served_base_name(self.model) and not info.merged
        return info.api_base if usable else None

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

    def _unload_old(self, api_base: str, candidate: Any) -> list[str]:
        """Unload this base model's adapters other than the new current one and the one it
        replaced (requests in flight may still use that one; a rollback needs no reload)."""
        previous = (self.registry.current_entry(self.model) or {}).get("previous")
        keep = {candidate.name} | ({self.registry.get(previous).name} if previous else set())
        prefix = f"{served_base_name(self.model)}-v"
        gone = [n for n in hot_load.served_models(api_base) if n.startswith(prefix) and n not in keep]
        for name in gone:
            hot_load.unload_adapter(api_base, name)
        return gone

    def _cleanup(self, run: Run) -> None:
        shutil.rmtree(run.path / "training" / "checkpoints", ignore_errors=True)
        shutil.rmtree(run.path / "training" / "adapter", ignore_errors=True)  # kept in the registry
        self.state.prune(self.settings.nightly.keep_runs)


def _when(ts: float | None) -> str:
    return "the beginning" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
