"""The gate's three measures end to end against the real sandbox, with litellm `mock_response`
models of known behaviour instead of a server: a candidate as good as the base and the current
adapter everywhere passes; one that only loses on natural tasks (repair fix rate unchanged) is
refused on turn-0 and last-turn Pass@1; a model that goes down makes the decision unreliable."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from assistant.serving.chat import ChatClient
from assistant.settings import BootstrapSection, EvalSection, LoopSettings
from assistant.store.trajectory_db import Store
from tests.assistant.sample_problems import add_problem
from tests.trainer.trainer_fakes import inc_problem
from trainer.release.gate import MEASURES, Arm, compare, gate_table
from trainer.release.gate_arms import ARM_MEASURES
from trainer.release.gate_settings import GateSettings, NaturalGateSettings
from trainer.repair.items import RepairItem

pytestmark = pytest.mark.docker
INC, ADD = inc_problem(), add_problem()
RIGHT = {INC.id: "def inc(x):\n    return x + 1", ADD.id: "def add(a, b):\n    return a + b"}
WRONG = {INC.id: "def inc(x):\n    return x", ADD.id: "def add(a, b):\n    return a - b"}
BUGS = {INC.id: "def inc(x):\n    return x - 1\n", ADD.id: "def add(a, b):\n    return a * b\n"}
# two repair sets, pooled into one measure as the gate pools HumanEval's and the natural set's bugs
ITEM_SETS = {
    "humaneval-repair": [RepairItem("inc#m0", INC, BUGS[INC.id])],
    "natural-repair": [RepairItem("add#m0", ADD, BUGS[ADD.id])],
}
PROBLEMS = [INC, ADD]
SETTINGS = GateSettings(turns=1, natural=NaturalGateSettings(turns=2), bootstrap=200, concurrency=2)
ES = EvalSection(bootstrap=BootstrapSection(resamples=200))
LOOP = LoopSettings(max_tokens=64)
Policy = Callable[[str, bool], str]  # (problem id, is a repair session) -> program


def right(pid: str, repair: bool) -> str:
    return RIGHT[pid]


def wrong_unless_repairing(pid: str, repair: bool) -> str:
    return RIGHT[pid] if repair else WRONG[pid]


class Behaving(ChatClient):
    def __init__(self, name: str, policy: Policy, down: bool = False, down_in_repairs: bool = False) -> None:
        super().__init__("openai/mock", display_name=name, retries=0, timeout_s=30)
        self.policy, self.down, self.down_in_repairs = policy, down, down_in_repairs

    def request_kwargs(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        pid = next(p.id for p in PROBLEMS if p.statement in messages[1]["content"])
        repair = len(messages) > 2 and BUGS[pid].strip() in messages[2]["content"]  # the buggy program as turn 0
        if self.down or (repair and self.down_in_repairs):
            return {"mock_response": Exception("the model is down")}
        return {"mock_response": f"Here.\n\n```python\n{self.policy(pid, repair)}\n```\n"}


def run(sandbox: Any, candidate: Behaving, said: list[str] | None = None) -> dict[str, Any]:
    refs = [Arm("base", Behaving("base", right)), Arm("current", Behaving("current", right), "current")]
    with Store.open() as store:
        cand = Arm("candidate", candidate, "cand")
        say = said.append if said is not None else lambda _: None
        report = compare(ITEM_SETS, PROBLEMS, refs, cand, sandbox, store, SETTINGS, LOOP, ES, progress=say)
    return report.to_dict()


def test_every_measure_against_every_reference(cobalt_home: Path, sandbox: Any) -> None:
    said: list[str] = []
    same = run(sandbox, Behaving("same", right), said)
    assert (same["items"], same["tasks"], same["natural_tasks"], same["natural_turns"]) == (2, 2, 2, 2)
    keys = [(c["measure"], c["reference"]) for c in same["comparisons"]]
    assert keys == [(m, r) for m in MEASURES for r in ("base", "current")]
    assert all((c["a"], c["b"], c["lo"], c["hi"]) == (1.0, 1.0, 0.0, 0.0) for c in same["comparisons"])
    assert same["promote"] and same["reason"].startswith("shown not worse") and not same["incomplete"]
    assert gate_table(same).count("| yes |") == 6
    # each phase's sessions are counted in the progress lines (a phase of 1-2 sessions: a line each)
    assert "gate: same (candidate) natural-repair: 1 session(s) to run" in said  # its one item, with feedback
    assert (
        "gate: base (base) natural: 2/2 sessions" in said
        and "gate: current (current) humaneval-repair: 1/1 sessions" in said
    )

    worse = run(sandbox, Behaving("worse", wrong_unless_repairing))
    rates = {(c["measure"], c["reference"]): (c["b"], c["lo"]) for c in worse["comparisons"]}
    assert rates[("repair_fix_rate", "base")] == (1.0, 0.0)  # the seeded repairs alone would pass it
    assert rates[("natural_pass_turn0", "base")] == (0.0, -1.0) and rates[("natural_pass_last", "current")][1] == -1.0
    assert not worse["promote"] and "natural_pass_turn0 vs base" in worse["reason"] and "too low" in worse["reason"]
    assert gate_table(worse).count("| NO |") == 4
    # what each arm did with the feedback, beside the decision: the candidate gave its wrong
    # natural programs back unchanged and fixed none; the references failed nothing to fix
    arms = worse["arms"]
    assert list(arms) == ["base", "current", "candidate"] and arms["candidate"]["name"] == "worse"
    by_turn = arms["candidate"]["natural_unchanged_by_turn"]
    assert [(e["num"], e["den"]) for e in by_turn] == [(2, 2)]  # 2 turns: one feedback turn
    cand = {m: (e["num"], e["den"]) for m, e in arms["candidate"].items() if m in ARM_MEASURES}
    assert cand == {
        "natural_fixed": (0, 2),
        "natural_unchanged": (2, 2),
        "repair_unchanged": (0, 2),
        "repair_no_code": (0, 2),
    }
    assert (arms["base"]["natural_fixed"]["den"], arms["base"]["natural_fixed"]["value"]) == (0, None)
    row = "| candidate (worse) | 0/2, 0.000 [0.000, 0.000] | 2/2, 1.000 [1.000, 1.000]; turn 1 2/2 |"
    assert row in gate_table(worse)

    down = run(sandbox, Behaving("down", right, down=True))
    assert not down["promote"] and down["reason"].startswith("unreliable:") and down["incomplete"]

    # errors in fewer sessions than abort a run are still no evidence of a wrong repair: no decision
    flaky = run(sandbox, Behaving("flaky", right, down_in_repairs=True))
    assert not flaky["promote"] and flaky["reason"].startswith("unreliable:")
    assert flaky["incomplete"] == [
        f"the {name} run of candidate has 1 session(s) ended by an error"
        for name in ("humaneval-repair", "natural-repair")
    ]
