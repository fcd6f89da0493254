"""The repair benchmark and curriculum: seeded single mutations of correct programs, presented as
the model's failed first turn (items, mutate, pins), run with and without feedback (repair_run,
repair_session, wording), measured (repair_metrics, repair_report) and trained on (curriculum).
`repair_eval` is `cobalt eval --benchmark humaneval-repair`; `repair_settings` reads configs/repair.yaml."""
