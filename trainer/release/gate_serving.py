"""The served side of the nightly job (`trainer.release.nightly.Retrain` inherits it): the
server the gate and hot-loading use (a named one, or the data dir's, started when
`nightly.start_server` allows), a client per arm (the base model; an adapter hot-loaded into
the base server or, on vLLM, served merged in its turn, `gate.serve_merged`), the gate's decision on a
registered version (recorded in the registry), and unloading adapters no longer served.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from assistant import runtime
from assistant.errors import UserError
from assistant.serving import hot_load, llama_server, models, private_server, server
from assistant.serving.adapters import served_base_name
from assistant.serving.chat import ChatClient
from assistant.settings import Settings
from trainer.release import gate
from trainer.release.merge import merge_adapter
from trainer.release.registry import AdapterVersion, Registry
from trainer.train_settings import TrainSettings


class GateServing:
    """What `Retrain` provides: the settings, the model retrained, a named server (`api_base`)
    or none, the registry, progress lines and the sandbox the gate runs programs in."""

    config: Settings
    settings: TrainSettings
    model: str
    api_base: str | None
    registry: Registry
    progress: Callable[[str], None]
    sandbox: Any

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
        # the base model named, so every arm's sessions use its own feedback wording, as served
        return runtime.served_client(self.config, api_base, name, tokenizer, base_model=self.model)

    def _ensure_loaded(self, api_base: str, name: str, path: Path) -> bool:
        """Load adapter `name` unless the server has it; True when it was loaded now."""
        if name in hot_load.served_models(api_base):
            return False
        hot_load.load_adapter(api_base, name, path)
        return True

    def _adapter_arm(self, label: str, api_base: str, item: AdapterVersion, loaded: list[str]) -> gate.Arm:
        """The gate's arm of adapter `item`: with `gate.serve_merged` on vLLM, its merged checkpoint
        (made now if missing) served by a server of its own during the arm's turn; else hot-loaded
        into the base server (its name added to `loaded` when it was loaded now). llama.cpp always
        hot-loads: it serves an adapter as a GGUF LoRA on the quantized base, never merged."""
        if not llama_server.serves_merged(self.config.server, self.settings.gate.serve_merged):
            if self._ensure_loaded(api_base, item.name, item.path):
                loaded.append(item.name)
            return gate.Arm(label, self._client(api_base, item.name), item.name)
        checkpoint = merge_adapter(item.path, models.resolve(item.base_model, self.config.paths), self.progress)

        @contextmanager
        def serve() -> Iterator[ChatClient]:
            with private_server.serving(
                self.config.server, self.config.paths, checkpoint, item.name, self.progress
            ) as info:
                yield self._client(info.api_base, item.name)

        return gate.Arm(label, None, item.name, serve)

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
            "current_version": current.version if current else None,
            "candidate": candidate.name,
            "loaded": loaded,
        }
        self.progress(gate.gate_table(decision))
        self.progress(("promote: " if report.promote else "keep the current model: ") + report.reason)
        self.registry.record_gate(version, decision)
        return decision

    def _running_api(self) -> str | None:
        """The api_base of a server already running the base model (none is started)."""
        if self.api_base:
            return self.api_base
        info = server.running(self.config.paths)
        usable = info is not None and info.model == served_base_name(self.model) and not info.merged
        return info.api_base if usable else None

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
