"""A way of the confirmation that reads part of the way between the references is held against
its nearer end launched again: the numbers of a vLLM-lab run in a loaded CI, where the
references were measured under a neighbour's load (good 2.55, bad 3.49 ms) and the culprit,
applied to good, read about 3.0 once the load had gone: the culprit was only suspected."""

from __future__ import annotations

from agent.phases import confirm
from agent.state import InvestigationState
from tests.conftest import confirming, measured


def _state() -> InvestigationState:
    """Both references under load; reverting the culprit restores the good value."""
    hunks = ["flash_attn", "flashinfer", "qwen2"]
    state = confirming("TPOT 3.9ms (was 2.9)", hunks, [3.49, 3.45], [2.55, 2.51], ["flash_attn"])
    measured(state, {"flashinfer", "qwen2"}, [2.2, 2.24])  # bad - flash_attn
    return state


def test_a_way_at_its_nearer_end_as_the_machine_runs_now_is_at_that_end() -> None:
    state = _state()
    conf = state.confirmation
    assert conf is not None
    measured(state, {"flash_attn"}, [3.02, 3.06])  # good + flash_attn: 55 % of the way
    planned = confirm.plan(state)
    assert planned is not None and planned.key == state.bad_key
    assert "as the machine runs now" in planned.why
    measured(state, {"flash_attn", "flashinfer", "qwen2"}, [3.05])  # bad, with the load gone
    assert confirm.plan(state) is None
    assert confirm.conclude(state) == "confirmed"
    lines: list[tuple[str, ...]] = []
    confirm.advance(state, lambda *words: lines.append(words))
    moved = [line[2] for line in lines if "the load moved" in line[2]]
    assert len(moved) == 1 and "bad measures 3.05 now" in moved[0], lines
    confirm.advance(state, lambda *words: lines.append(words))  # another round: said once
    assert sum("the load moved" in note for note in state.notes) == 1


def test_a_way_still_apart_from_its_nearer_end_stays_part_of_the_way() -> None:
    state = _state()
    conf = state.confirmation
    assert conf is not None
    measured(state, {"flash_attn"}, [3.02, 3.06])
    assert confirm.plan(state) is not None  # bad again, once
    measured(state, {"flash_attn", "flashinfer", "qwen2"}, [3.47])  # still at its level
    assert confirm.plan(state) is None  # asked once: no second recheck
    assert confirm.conclude(state) == "suspected"  # significant one way only
