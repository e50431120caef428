"""The search's plan on states whose answer is known: linked candidates are never split, a half
that cannot be judged sends the search to its complement and then to a finer split, and a
single candidate that cannot be judged alone is named, never made a finding by guess."""

from __future__ import annotations

from agent.levels import ensure_config
from agent.phases import search
from agent.state import Failure, Hypothesis, InvestigationState, Launch, Link, Task
from tests.conftest import bare_state
from tools.repo.candidates import Candidate


def _state(ids: list[str], links: tuple[tuple[str, str], ...] = ()) -> InvestigationState:
    state = bare_state("verify 29ms (was 19)")
    state.candidates = [Candidate(id=i, kind="hunk", file=f"{i}.py") for i in ids]
    state.hypotheses = {i: Hypothesis(candidate=i, prior=1.0, reasons=[]) for i in ids}
    state.links = [Link(a=a, b=b, reason=f"{a} calls {b}") for a, b in links]
    state.bad_key = ensure_config(state, set(ids)).key
    state.good_key = ensure_config(state, set()).key
    for key, values in ((state.bad_key, [29.0, 29.2]), (state.good_key, [19.0, 19.1])):
        state.configs[key].launches = [
            Launch(value=v, samples=[v], log="", request=i) for i, v in enumerate(values)
        ]
    return state


def test_linked_candidates_stay_in_one_half_and_a_linked_set_is_one_finding() -> None:
    state = _state(["a", "b", "c", "d"], links=(("a", "c"), ("b", "d")))
    first, second = search.split(state, ["a", "b", "c", "d"])
    assert {frozenset(first), frozenset(second)} == {frozenset("ac"), frozenset("bd")}
    assert search.linked(state, ["a", "c"]) and not search.linked(state, ["a", "b"])
    state.tasks = [Task(ids=["a", "c"], low_key=state.bad_key, high_key=state.good_key)]
    assert search.plan(state) is None
    assert [f.ids for f in state.findings] == [["a", "c"]]


def test_a_split_takes_the_half_nearest_half_the_prior_mass() -> None:
    """Two equal suspects and a faint third: reverting both would almost surely restore and
    tell nothing; one of them alone is a coin toss, the most a launch can tell."""
    state = _state(["deepseek", "triton", "engine"])
    for cid, prior in (("deepseek", 4.5), ("triton", 4.5), ("engine", 0.4)):
        state.hypotheses[cid].prior = prior
    first, second = search.split(state, ["deepseek", "triton", "engine"])
    assert first == ["deepseek"] and sorted(second) == ["engine", "triton"]


def _fail(state: InvestigationState, key: str) -> None:
    state.configs[key].failures.append(
        Failure(request=99, stage="build", error="patch does not apply")
    )


def test_an_unresolved_half_sends_the_search_to_its_complement_then_finer() -> None:
    state = _state(["a", "b", "c", "d"])
    state.tasks = [Task(ids=["a", "b", "c", "d"], low_key=state.bad_key, high_key=state.good_key)]
    first = search.plan(state)
    assert first is not None and state.tasks[0].stage == "first"
    _fail(state, first.key)
    second = search.plan(state)
    assert second is not None and second.key != first.key  # the complement
    assert state.tasks[0].first_unresolved
    _fail(state, second.key)
    finer = search.plan(state)  # neither half can be judged: each half, split finer
    assert finer is not None
    assert sorted(len(task.ids) for task in state.tasks) == [2, 2]
    assert any("did not run (build: patch does not apply)" in note for note in state.notes)


def test_two_single_candidates_that_cannot_be_told_apart_are_named_not_guessed() -> None:
    state = _state(["a", "b"])
    state.tasks = [Task(ids=["a", "b"], low_key=state.bad_key, high_key=state.good_key)]
    for _ in range(2):
        planned = search.plan(state)
        assert planned is not None
        _fail(state, planned.key)
    assert search.plan(state) is None
    assert [f.ids for f in state.findings] == [["a", "b"]]
    assert any("could not separate {a, b}" in note for note in state.notes)
