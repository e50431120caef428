"""Disturbed launches, on numbers like those of tp-lab runs on a 2-core VM whose whole launches
slowed 2-4x now and then (good 13-18 ms, bad 53-64 ms)."""

from __future__ import annotations

from agent.disturbed import set_aside_disturbed
from agent.levels import between, ensure_config
from agent.state import InvestigationState, Launch
from tests.conftest import bare_state
from tools.repo.candidates import Candidate


def _state(values: dict[str, list[float]]) -> InvestigationState:
    state = bare_state("verify 90ms")
    state.candidates = [
        Candidate(kind="hunk", id=cid, file=f"{cid}.py", patch="") for cid in ("culprit", "decoy")
    ]
    state.bad_key = ensure_config(state, {"culprit", "decoy"}).key
    state.good_key = ensure_config(state, set()).key
    keys = {
        "bad": state.bad_key,
        "good": state.good_key,
        "revert": ensure_config(state, {"decoy"}).key,
    }
    request = 0
    for name, series in values.items():
        for value in series:
            request += 1
            state.configs[keys[name]].launches.append(
                Launch(value=value, samples=[value], log="", request=request)
            )
    return state


def test_a_launch_slowed_4x_as_a_whole_is_set_aside_and_the_revert_restores() -> None:
    # a full-suite run beside other test processes: one launch of the revert slowed 4x
    state = _state(
        {
            "bad": [55.0, 53.0, 57.0, 56.0],
            "good": [14.5, 13.8, 15.2, 14.1],
            "revert": [58.0, 14.6, 15.0],
        }
    )
    lines = set_aside_disturbed(state)
    assert len(lines) == 1
    assert "58 is 3.92x the mean of the configuration's other 2 launches (14.6, 15)" in lines[0]
    assert "slower" in lines[0]
    revert = between(state, ensure_config(state, {"decoy"}).key, state.bad_key, state.good_key)
    assert revert.verdict == "restored" and revert.launches == 2
    assert set_aside_disturbed(state) == []  # marked once, kept in the state
    assert [
        launch.value for launch in state.configs[ensure_config(state, {"decoy"}).key].launches
    ] == [58.0, 14.6, 15.0]


def test_a_2x_slowdown_among_noisy_launches_is_left_to_the_statistics() -> None:
    # a CI run of the tp lab: good varies 13-18 ms, so a 2x launch is 5 sigmas on 7 df (p =
    # 0.0015): not beyond doubt, and relative noise copes with it (tests/agent/test_stats.py)
    state = _state(
        {
            "bad": [55.0, 53.0, 64.0, 115.0],
            "good": [14.5, 13.0, 18.0, 15.0],
            "revert": [37.6, 15.0, 16.0],
        }
    )
    assert set_aside_disturbed(state) == []


def test_ordinary_noise_sets_nothing_aside() -> None:
    # 10 % launch noise, the largest launch 1.8 sigmas from its configuration's others
    state = _state(
        {
            "bad": [29.0, 31.9, 26.4, 30.2],
            "good": [19.0, 21.1, 17.6, 19.9],
            "revert": [19.4, 22.8, 18.1],
        }
    )
    assert set_aside_disturbed(state) == []


def test_two_launches_that_disagree_are_not_judged() -> None:
    state = _state({"bad": [55.0, 53.0, 54.0], "good": [14.5, 13.0, 15.0], "revert": [37.6, 15.0]})
    assert set_aside_disturbed(state) == []  # which one was slowed? a third launch decides


def test_a_fast_launch_among_slowed_ones_is_the_true_reading_and_stays() -> None:
    """Two of three launches slowed 4x: the fast one is far from their mean, but a machine
    never makes a process faster than its code, so it is not set aside (the majority would win)."""
    state = _state(
        {
            "bad": [55.0, 53.0, 57.0, 56.0],
            "good": [14.5, 13.8, 15.2, 14.1],
            "revert": [58.0, 57.0, 14.6],
        }
    )
    assert set_aside_disturbed(state) == []
    mirrored = _state({"bad": [55.0, 53.0, 57.0, 56.0], "good": [14.5, 13.8, 15.2, 14.1]})
    mirrored.worse = "lower"  # a throughput: the slowed launch reads lower
    mirrored.configs[mirrored.good_key].launches[0].value = 3.6
    mirrored.configs[mirrored.good_key].launches[0].samples = [3.6]
    [line] = set_aside_disturbed(mirrored)
    assert "3.6 is 0.25x" in line and "slower" in line


def test_a_traced_first_launch_counts_only_while_its_replicates_agree() -> None:
    """The import trace may slow a launch: the traced one is held to a plain 1 % test against
    the untraced replicates of its configuration, not to the family-wide threshold."""
    state = _state({"bad": [62.0, 55.0, 56.0, 55.5], "good": [14.5, 14.6, 14.4, 14.5]})
    state.configs[state.bad_key].launches[0].traced = True
    lines = set_aside_disturbed(state)
    assert len(lines) == 1 and "traced (import trace on)" in lines[0]
    assert state.configs[state.bad_key].values == [55.0, 56.0, 55.5]
    agreeing = _state({"bad": [55.8, 55.0, 56.0, 55.5], "good": [14.5, 14.6, 14.4, 14.5]})
    agreeing.configs[agreeing.bad_key].launches[0].traced = True
    assert set_aside_disturbed(agreeing) == []
