"""Evaluation of a model (or adapter) on a benchmark, as one package.

- `evaluate`: run N multi-turn sessions per problem and build the report
- `metrics`: per-session outcomes and the metrics computed from many
- `bootstrap`: percentile bootstrap intervals over clustered samples
- `report`: the report (JSON, markdown table, PNG plot)
- `compare`: paired comparison of two reports (the promotion gate uses it)
- `splits`: deterministic benchmark splits and the perturbed view
- `settings`: `configs/eval.yaml` read once

This package imports nothing itself; import from its modules.
"""
