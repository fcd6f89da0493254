"""The bandit dataset: max-variance down-sampling on crafted inputs, every filter of
docs/method.md with its count, partial prompts and prev_best, the validation split, the
token limit with the real tiny tokenizer, and files that `datasets` loads."""

from __future__ import annotations

import json

import pytest

from assistant.loop import feedback, prompts
from assistant.problems.schema import Problem
from assistant.settings_loader import load_settings
from sandbox.api import RunResult, TestResult
from tests.trainer.trainer_fakes import add_problem, session, sum_problem, turn
from trainer.data.build import build, load_tokenizer, prompt_tokens
from trainer.data.dataset import select
from trainer.data.dataset_files import load_split, read_meta, validation_problems
from trainer.data.trajectories import max_variance_subset, turn_pass_rate
from trainer.train_settings import load_train_settings


def test_max_variance_fewer_than_k_or_exactly_k_keeps_all() -> None:
    assert max_variance_subset([], 4) == []
    assert max_variance_subset([0.3, 0.1], 4) == [0, 1]
    assert max_variance_subset([0.3, 0.1, 0.2, 0.9], 4) == [0, 1, 2, 3]


def test_max_variance_picks_the_widest_spread() -> None:
    # j = 2 (two lowest + two highest) has the largest variance (0.1625)
    assert max_variance_subset([0.1, 0.2, 0.3, 0.9, 1.0], 4) == [0, 1, 3, 4]
    assert max_variance_subset([1.0, 0.1, 0.9, 0.2, 0.3], 4) == [0, 1, 2, 3]  # input order does not matter
    assert max_variance_subset([0.2, 0.9, 0.1], 1) == [2]  # K = 1: only j = 0, the lowest


def test_max_variance_ties() -> None:
    # sorted: 5 (0.0), 0, 1, 2 (0.5), 3, 4 (1.0); j = 2 and j = 3 both give {0, .5, 1, 1}:
    # the smallest j wins, and equal d keep their original order
    assert max_variance_subset([0.5, 0.5, 0.5, 1.0, 1.0, 0.0], 4) == [0, 3, 4, 5]


def test_max_variance_all_equal_keeps_the_first_k() -> None:
    assert max_variance_subset([0.5] * 7, 4) == [0, 1, 2, 3]
    with pytest.raises(ValueError):
        max_variance_subset([0.1], 0)


def test_pass_rate_is_on_all_tests_once_each() -> None:
    problem = sum_problem()
    t = turn(0, 0.5, problem)
    pub = problem.public_tests
    hid = problem.hidden_tests
    t.public = RunResult(
        tests=[
            TestResult("passed", input=pub[0].input, expected=pub[0].output),
            TestResult("failed", input=pub[1].input, expected=pub[1].output),
        ]
    )
    t.hidden = RunResult(tests=[TestResult("passed", input=h.input, expected=h.output) for h in hid])
    assert turn_pass_rate(t) == pytest.approx(4 / 5)  # "2 3" is public and hidden: counted once
    t.public = t.hidden = None
    t.hidden_pass_rate = 0.25
    assert turn_pass_rate(t) == 0.25  # imported records carry only the rates
    t.program = None
    assert turn_pass_rate(t) == 0.0


def _sessions() -> list:
    easy, mid, many = add_problem("easy"), sum_problem("mid"), sum_problem("many")
    out = [session(easy, [1.0], "e1"), session(easy, [1.0], "e2")]
    out += [
        session(mid, [0.0, 1.0], "m1"),
        session(mid, [0.5, 0.5], "m2"),
        session(mid, [0.0, 0.5], "m3"),
        session(mid, [1.0], "m4"),
    ]
    rates = [[0.0, 1.0], [0.25, 1.0], [0.5, 1.0], [0.75, 1.0], [0.0, 0.5, 1.0], [0.75, 0.5, 1.0]]
    out += [session(many, r, f"c{i}") for i, r in enumerate(rates)]
    empty = session(mid, [], "empty")
    lost = session(mid, [0.0, 1.0], "lost")
    lost.problem = None
    return out + [empty, lost]


def test_filters_are_applied_in_order_and_counted() -> None:
    chosen = select(_sessions(), k=4, max_context=3)
    c = chosen.stats.counts
    assert (c["sessions"], c["sessions_without_turns"], c["sessions_unusable"]) == (14, 1, 1)
    assert (c["tasks"], c["tasks_too_easy"]) == (3, 1)
    assert c["trajectories"] == 4 + 6
    assert c["trajectories_no_change"] == 2  # m2 (flat) and m4 (one correct turn)
    assert c["trajectories_never_solved"] == 1  # m3 improved but never reached 1
    assert c["trajectories_downsampled"] == 2  # `many` has 6 with d > 0 and max = 1; K = 4
    assert c["trajectories_kept"] == 1 + 4
    assert c["prompts_first_turn"] == 2  # always kept, once per remaining task
    assert all(p.problem.id != "easy" for p in chosen.train)
    firsts = [p for p in chosen.train if not p.turns]
    assert {p.problem.id for p in firsts} == {"mid", "many"} and all(p.prev_best == 0.0 for p in firsts)


def test_partial_prompts_and_prev_best() -> None:
    mid = sum_problem("mid")
    chosen = select([session(mid, [0.0, 1.0], "m1"), session(mid, [1.0], "m4")], k=4, max_context=3)
    prompts_m1 = [p for p in chosen.train if p.session_id == "m1"]
    assert [len(p.turns) for p in prompts_m1] == [1, 2]
    assert [p.prev_best for p in prompts_m1] == [0.0, 1.0]
    second = prompts_m1[1].messages()
    assert second[:2] == prompts.style().initial_messages(mid)  # built by assistant.loop.prompts only
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert second[3] == prompts.style().feedback_message(prompts_m1[1].turns[0].feedback)
    assert prompts_m1[1].row("train")["prompt"] == second


def test_stop_after_two_all_passed_feedbacks_and_dedupe() -> None:
    p = sum_problem("imported")
    # an imported trajectory that continued after passing: turns 1 and 2 both say "all passed"
    long = session(p, [0.0, 1.0, 1.0, 1.0], "long")
    twin = session(p, [0.0, 1.0], "twin", programs=[long.turns[0].program, "print(2)"])
    twin.turns[0] = long.turns[0]
    chosen = select([long, twin], k=4, max_context=3)
    c = chosen.stats.counts
    assert feedback.is_all_passed(long.turns[1].feedback) and feedback.is_all_passed(long.turns[2].feedback)
    assert [len(x.turns) for x in chosen.train if x.session_id == "long"] == [1, 2]
    assert c["prompts_stopped_all_passed"] == 1
    assert c["prompts_duplicate"] == 1  # twin's one-turn context equals long's


def test_unsolved_trajectories_give_prompts_only_when_asked() -> None:
    mid = sum_problem("mid")
    group = [
        session(mid, [0.0, 1.0], "solved"),
        session(mid, [0.25, 0.25, 0.25], "flat"),  # the smallest d: validation
        session(mid, [0.0, 0.5], "improved"),  # changed, never solved
        session(mid, [0.5, 0.25, 0.5], "wobbly"),
    ]
    plain = select(group, k=4, max_context=3)
    assert {p.session_id for p in plain.train} == {None, "solved"}  # the paper's filter
    assert "prompts_unsolved" not in plain.stats.counts
    one = select(group, k=4, max_context=2, unsolved=1)
    assert {p.session_id for p in one.train} == {None, "solved", "wobbly"}  # least improved (d 0.25), not "flat"
    wobbly = [p for p in one.train if p.session_id == "wobbly"]
    assert [len(p.turns) for p in wobbly] == [1, 2] and [p.prev_best for p in wobbly] == [0.5, 0.5]
    assert {p.session_id for p in one.validation} == {None, "flat"}
    two = select(group, k=4, max_context=1, unsolved=5)
    assert {p.session_id for p in two.train} == {None, "solved", "wobbly", "improved"}
    assert all(len(p.turns) == 1 for p in two.train if p.session_id in ("wobbly", "improved"))
    c = two.stats.counts
    assert (c["trajectories_unsolved"], c["prompts_unsolved"]) == (2, 2)


def test_first_turn_prompts_can_be_left_out_of_training_only() -> None:
    mid = sum_problem("mid")
    group = [session(mid, [0.0, 1.0], "solved"), session(mid, [0.25, 0.25], "flat")]
    both = select(group, k=4, max_context=1)
    repair = select(group, k=4, max_context=1, first_turn=False)
    assert [p.session_id for p in both.train] == [None, "solved"]
    assert [p.session_id for p in repair.train] == ["solved"]  # the repair context after turn 0
    assert repair.stats.counts["prompts_first_turn"] == 0
    assert [p.session_id for p in repair.validation] == [p.session_id for p in both.validation] == [None, "flat"]


def test_validation_is_the_smallest_d_trajectory_per_task() -> None:
    chosen = select(_sessions(), k=4, max_context=3)
    assert [p.id for p in chosen.validation_problems] == ["mid", "many"]
    by_task = {}
    for item in chosen.validation:
        by_task.setdefault(item.problem.id, set()).add(item.session_id)
    assert by_task["mid"] == {None, "m2"}  # m2 and m4 have d = 0; m2 comes first
    assert by_task["many"] == {None, "c3"}  # [0.75, 1.0]: d = 0.25


def test_build_writes_loadable_files_and_drops_long_prompts(tmp_path) -> None:
    cfg = load_settings()
    settings = load_train_settings(cfg.train, "test")
    tokenizer = load_tokenizer("tiny", cfg.paths)
    sessions = _sessions()
    lengths = sorted({prompt_tokens(tokenizer, p.messages()) for p in select(sessions).train})
    settings.dataset.max_prompt_tokens = lengths[-1] - 1  # the longest prompts are dropped, not cut
    built = build(
        sessions,
        tmp_path / "ds",
        settings,
        tokenizer=tokenizer,
        sandbox=None,
        loop=None,  # type: ignore[arg-type]
        perturb=False,
    )
    meta = read_meta(tmp_path / "ds")
    assert meta["counts"]["prompts_too_long"] >= 1
    assert (
        meta["counts"]["train_prompts"]
        == built.train_rows
        == len(select(sessions).train) - meta["counts"]["prompts_too_long"]
    )
    train = load_split(tmp_path / "ds", "train")
    assert len(train) == built.train_rows and max(train["prompt_tokens"]) <= lengths[-1] - 1
    row = train[0]
    assert row["prompt"][0]["role"] == "system" and json.loads(row["problem"])["id"] in {"mid", "many"}
    assert set(row) >= {"prompt", "problem", "prev_best", "task_id", "context_turns", "perturbed"}
    import datasets

    loaded = datasets.load_dataset(
        "json",
        data_files={
            "train": str(tmp_path / "ds" / "train.jsonl"),
            "validation": str(tmp_path / "ds" / "validation.jsonl"),
        },
        cache_dir=str(tmp_path / "hf"),
    )
    assert len(loaded["train"]) == built.train_rows and len(loaded["validation"]) == built.validation_rows
    assert [p.id for p in validation_problems(tmp_path / "ds")] == ["mid", "many"]
    assert len(meta["data_hash"]) == 64


def test_the_dataset_is_written_in_the_loops_prompt_style(tmp_path) -> None:
    """Train on the prompt you serve: `loop.answer_format`/`loop.feedback_wording` reach every row."""
    cfg = load_settings()
    settings = load_train_settings(cfg.train, "test")
    loop = cfg.loop.merged({"answer_format": "code_first", "feedback_wording": "brief"})
    build(_sessions(), tmp_path / "ds", settings, tokenizer=None, sandbox=None, loop=loop, perturb=False)
    style = prompts.style_for(loop)
    assert read_meta(tmp_path / "ds")["prompt"] == {"answer_format": "code_first", "feedback_wording": "brief"}
    rows = [json.loads(line) for line in (tmp_path / "ds" / "train.jsonl").read_text().splitlines()]
    assert rows and all(
        r["prompt"][1]["content"] == style.first_user_content(Problem.from_dict(json.loads(r["problem"]))) for r in rows
    )
    later = [m for r in rows for m in r["prompt"][3::2]]
    assert later and all(m["content"] == style.feedback_content(prompts.feedback_of(m["content"])) for m in later)


@pytest.mark.docker
def test_dataset_build_and_train_commands(cobalt_home, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    from assistant.cli import main
    from assistant.store.trajectory_db import Store

    with Store.open(load_settings().paths) as store:
        for s in _sessions():
            if s.problem is not None:
                store.insert_session(s)
    out = tmp_path / "ds"
    assert main(["dataset", "build", "--model", "tiny", "--profile", "test", "--no-perturb", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    for name in (
        "tasks_too_easy",
        "trajectories_no_change",
        "trajectories_never_solved",
        "trajectories_downsampled",
        "prompts_too_long",
        "train_prompts",
    ):
        assert name in printed
    assert "sessions_without_turns" in printed and f"to {out}" in printed
    assert read_meta(out)["counts"]["tasks_too_easy"] == 1
    train_args = ["train", "--dataset", str(out), "--model", "tiny", "--profile", "test", "--max-steps", "1"]
    train_args += ["--out", str(tmp_path / "train"), "--register"]
    code = main([*train_args, "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["registered"] == {"version": 1, "name": "tiny-v1"}
    assert result["metrics"]["steps"] == 1 and (cobalt_home / "adapters" / "v1" / "adapter_config.json").is_file()
    # the finished run again: its saved adapter comes back, and is not registered a second time
    assert main([*train_args, "--json"]) == 0 and json.loads(capsys.readouterr().out)["registered"] == {
        "version": 1,
        "name": "tiny-v1",
    }
    assert not (cobalt_home / "adapters" / "v2").exists()
    assert main(["train", "--dataset", str(tmp_path), "--model", "tiny"]) == 1
    assert "is not a dataset directory" in capsys.readouterr().err
    no_meta = tmp_path / "no-meta"
    no_meta.mkdir()
    (no_meta / "train.jsonl").write_text("{}\n")
    assert main(["train", "--dataset", str(no_meta), "--model", "tiny"]) == 1  # not a traceback
    assert "has no meta.json with its data_hash" in capsys.readouterr().err
    import yaml

    (tmp_path / "only.yaml").write_text(yaml.safe_dump([sum_problem("mid").to_dict()]))
    assert (
        main(
            [
                "dataset",
                "build",
                "--model",
                "tiny",
                "--profile",
                "test",
                "--no-perturb",
                "--out",
                str(tmp_path / "one"),
                "--tasks",
                str(tmp_path / "only.yaml"),
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["counts"]["tasks"] == 1


def test_imported_jsonl_gives_the_same_selection(cobalt_home, tmp_path) -> None:
    from assistant.loop.jsonl_export import export_records, write_jsonl
    from assistant.store.trajectory_db import Store
    from trainer.data.session_source import sessions_from_jsonl, sessions_from_store

    with Store.open(load_settings().paths) as store:
        for s in _sessions():
            if s.problem is not None and s.turns:
                store.insert_session(s)
        from_store = select(sessions_from_store(store, sources=["collect"]))
        with open(tmp_path / "export.jsonl", "w") as fh:
            write_jsonl(export_records(store), fh)
    from_file = select(sessions_from_jsonl(tmp_path / "export.jsonl"))
    assert from_file.stats.to_dict() == from_store.stats.to_dict()
    assert [p.key() for p in from_file.train] == [p.key() for p in from_store.train]


def test_tampered_turns_never_enter_a_context_and_are_counted() -> None:
    p = sum_problem("forged")
    forged = session(p, [0.0, 0.5, 1.0], "forged")
    forged.turns[1].hidden = RunResult(tests=[TestResult(status="tampered")], tampered=True, flags=["frames"])
    chosen = select([forged], k=4, max_context=3)
    c = chosen.stats.counts
    assert forged.turns[1].tampered and c["turns_tampered"] == 1
    contexts = [x.turns for x in chosen.train if x.session_id == "forged"]
    assert contexts == [forged.turns[:1]]  # the context that would show the forged turn is dropped
    assert c["prompts_tampered_context"] == 1
