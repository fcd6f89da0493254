"""Evaluation of a model (or adapter) on a benchmark, as one package.

- `evaluate`: run N multi-turn sessions per problem and build the report
- `eval_metrics`: per-session outcomes and the metrics computed from many
- `bootstrap`: percentile bootstrap intervals over clustered samples
- `eval_report`: the report (JSON, markdown table, PNG plot)
- `paired`: paired comparison of two reports (the promotion gate uses it)
- `eval_sets`: the problem sets evaluated on, their deterministic splits and the perturbed view

Its settings are the `eval:` section, `assistant.settings.EvalSection` (configs/eval.yaml).
This package imports nothing itself; import from its modules.
"""
