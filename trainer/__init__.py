"""Cobalt's trainer: trajectories -> bandit dataset -> GRPO+LoRA -> evaluate -> promote.

Public API (import from the modules; this package imports nothing heavy):
- `trainer.dataset.max_variance_subset`, `trainer.dataset.select` (filters, partial prompts)
- `trainer.sessions` (sessions from the store or a JSONL export), `trainer.build.build`
  (the dataset), `trainer.dataset_files` (its files: `load_split`, `read_meta`),
  `trainer.perturb.perturb_problem`
- `trainer.reward.score`, `trainer.reward.SandboxReward` (the TRL reward function)
- `trainer.grpo.train` (LoRA GRPO, resumable), `trainer.registry.Registry` (versions,
  promote, rollback; `current.json`), `trainer.gate.compare` (promotion gate),
  `trainer.nightly.Retrain` (`cobalt retrain`), `trainer.bench` (`cobalt bench train`)
- `trainer.eval.evaluate` (multi-turn evaluation; the evaluation issue)
"""
