"""Cobalt's trainer: trajectories -> bandit dataset -> GRPO+LoRA -> evaluate -> promote.

Public API (import from the modules; this package imports nothing heavy):
- `trainer.dataset.max_variance_subset`, `trainer.dataset.select` (filters, partial prompts)
- `trainer.build.build` / `load_split` (dataset files), `trainer.perturb.perturb_problem`
- `trainer.reward.score`, `trainer.reward.SandboxReward` (the TRL reward function)
- `trainer.grpo.train` (LoRA GRPO, resumable), `trainer.registry.Registry` (versions,
  promote, rollback; `current.json`), `trainer.gate.compare` (promotion gate),
  `trainer.nightly.Retrain` (`cobalt retrain`), `trainer.bench` (`cobalt bench train`)
- `trainer.eval.evaluate` (multi-turn evaluation; the evaluation issue)
"""
