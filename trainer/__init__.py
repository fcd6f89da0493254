"""Cobalt's trainer: trajectories -> bandit dataset -> GRPO+LoRA -> evaluate -> promote.

Public API (import from the modules; this package imports nothing heavy):
- `trainer.data.trajectories.max_variance_subset`, `trainer.data.dataset.select` (filters, partial prompts)
- `trainer.data.session_source` (sessions from the store or a JSONL export), `trainer.data.build.build`
  (the dataset), `trainer.data.dataset_files` (its files: `load_split`, `read_meta`),
  `trainer.data.perturb.perturb_problem`
- `trainer.training.reward.score`, `trainer.training.reward.SandboxReward` (the TRL reward function)
- `trainer.training.grpo.train` (LoRA GRPO, resumable), `trainer.release.registry.Registry` (versions,
  promote, rollback; `current.json`), `trainer.release.gate.compare` (promotion gate),
  `trainer.release.nightly.Retrain` (`cobalt retrain`), `bench.train` (`cobalt bench train`)
- `trainer.eval.evaluate` (multi-turn evaluation; the evaluation issue)
"""
