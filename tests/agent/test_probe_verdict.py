"""A probe between the ends is "part of the way" only against its good neighbour as the
machine runs now: a load that rose after the references were measured lifts a good commit
between the ends (werkzeug's 1 ms end read 1.4-2.2 ms beside two busy ranks), and the
bisection then searched the whole range by hunk."""

from __future__ import annotations

from agent.levels import ensure_config
from agent.phases import bisect
from agent.phases.bisect import _commit_config
from agent.phases.probe_verdict import PART_WAY, RECHECK, judge
from agent.state import Bisection, InvestigationState, Launch, RangeState
from tests.conftest import bare_state, measured
from tools.repo.candidates import Candidate


def _range() -> tuple[InvestigationState, RangeState]:
    """References of a 10x regression, quiet (1.0 and 10 ms), and a probe measured twice at
    3.2 ms: half the log gap, apart from both ends."""
    state = bare_state("latency_ms 10 (was 1)")
    state.candidates = [Candidate(kind="hunk", id="h", file="h.py", patch="")]
    state.bad_key = measured(state, {"h"}, [10.0, 10.1])
    state.good_key = measured(state, set(), [1.0, 1.01])
    good = RangeState(sha="a" * 40, subject="(good)", key=state.good_key, verdict="good")
    probe = RangeState(sha="b" * 40, subject="a commit")
    bad = RangeState(sha="c" * 40, subject="(bad)", key=state.bad_key, verdict="bad")
    state.bisection = Bisection(states=[good, probe, bad], low=0, high=2)
    _commit_config(state, probe)
    for value in (3.2, 3.15):
        state.next_request += 1
        launch = Launch(value=value, samples=[value], log="", request=state.next_request)
        state.configs[probe.key].launches.append(launch)
    return state, probe


def _good_now(state: InvestigationState, value: float) -> None:
    """The good neighbour launched again, after the probe."""
    key = ensure_config(state, set()).key
    measured(state, set(), [value])
    assert key == state.good_key


def test_a_probe_at_its_neighbours_level_as_the_machine_runs_now_is_good() -> None:
    state, probe = _range()
    assert judge(state, probe) == (RECHECK, state.good_key)  # the neighbour first
    probe.recheck = state.good_key  # as the bisection marks it meanwhile
    _good_now(state, 3.1)  # the load rose: the good tree reads 3.1 now
    verdict, why = judge(state, probe)
    assert verdict == "good" and "the load moved, not the code" in why


def _probe_again(state: InvestigationState, probe: RangeState, value: float) -> None:
    state.next_request += 1
    launch = Launch(value=value, samples=[value], log="", request=state.next_request)
    state.configs[probe.key].launches.append(launch)


def test_a_true_step_part_of_the_way_stays_bad_on_three_launches() -> None:
    state, probe = _range()
    probe.recheck = state.good_key
    _good_now(state, 1.02)  # the good tree still reads 1 ms: the probe holds part of the gap
    verdict, why = judge(state, probe)
    assert verdict == "more" and why.startswith(PART_WAY)  # a third launch before believing it
    _probe_again(state, probe, 3.18)
    verdict, why = judge(state, probe)
    assert verdict == "bad" and why.startswith(PART_WAY)


def test_a_step_its_best_launch_does_not_show_was_the_machine() -> None:
    """Two slowed processes of a good tree (3.2, 3.15) and a third at the good level: a
    machine never runs code faster than it is, so the fast launch is the tree's level."""
    state, probe = _range()
    measured(state, set(), [1.0, 1.01, 0.99])  # the references quiet (well measured)
    measured(state, {"h"}, [10.0, 10.1, 9.9])
    probe.recheck = state.good_key
    _good_now(state, 1.02)
    _probe_again(state, probe, 1.01)
    verdict, why = judge(state, probe)
    assert verdict == "good", why
    assert "its best launch (1.01) runs at the level of its good neighbour" in why, why


def test_a_probe_at_its_bad_neighbours_level_as_the_machine_runs_now_is_bad() -> None:
    """markdown2's loaded CI run: the bad end read 157 ms where its tree runs at 85, and the
    first bad commit (85 ms) looked part of the way; the rest of the range was searched."""
    state, probe = _range()
    for launch in state.configs[probe.key].launches:
        launch.value = 5.0  # nearer the bad end (10) than the good (1) on the log scale
    assert judge(state, probe) == (RECHECK, state.bad_key)
    probe.recheck = state.bad_key
    measured(state, {"h"}, [5.05])  # the bad tree, launched again, reads 5 now
    verdict, why = judge(state, probe)
    assert verdict == "bad" and not why.startswith(PART_WAY), why
    assert "the load moved, not the code" in why


def test_the_neighbour_of_a_probe_part_of_the_way_is_launched_itself() -> None:
    """Not a reference measured less often in its place (werkzeug under slowed processes: the
    good end was launched instead, and the probe, its neighbour never launched since, was
    taken part of the way on two launches, one of them slowed)."""
    state, probe = _range()
    state.configs[state.good_key].launches.pop()  # the good end measured once
    for launch in state.configs[probe.key].launches:
        launch.value = 2.8  # nearer the good side
    neighbour = RangeState(sha="d" * 40, subject="a harmless commit", verdict="good")
    _commit_config(state, neighbour)
    for value in (1.0, 1.02):  # launched before the probe (request 0)
        launch = Launch(value=value, samples=[value], log="", request=0)
        state.configs[neighbour.key].launches.append(launch)
    b = state.bisection
    assert b is not None
    b.states.insert(1, neighbour)
    b.low, b.high = 1, 3
    launch = bisect.plan(state)
    assert launch is not None and launch.key == neighbour.key, launch
    assert probe.recheck == neighbour.key


def test_a_step_beside_a_good_state_never_launched_stands_on_its_launches() -> None:
    """A merge's side line starts at the merge base, good by ancestry and never launched: a
    probe nearer the bad end has no good launches to show its best launch against."""
    state, probe = _range()
    for launch in state.configs[probe.key].launches:
        launch.value = 5.0
    base = RangeState(sha="e" * 40, subject="(the merge base)", verdict="good")
    _commit_config(state, base)
    b = state.bisection
    assert b is not None
    b.states.insert(1, base)
    b.low, b.high = 1, 3
    probe.recheck = state.bad_key
    measured(state, {"h"}, [10.05])  # the bad end as it runs now: the probe sits apart
    assert judge(state, probe)[0] == "more"
    _probe_again(state, probe, 5.02)
    verdict, why = judge(state, probe)
    assert verdict == "bad" and why.startswith(PART_WAY), why


def test_a_probe_whose_mean_is_bad_but_best_launch_good_is_good() -> None:
    """One process slowed 10x (31 ms) beside one at the good level: the mean on the log scale
    sits at the bad level, the best launch at the good one."""
    state, probe = _range()
    measured(state, set(), [1.0, 1.01, 0.99])
    measured(state, {"h"}, [10.0, 10.1, 9.9])
    for launch, value in zip(state.configs[probe.key].launches, (31.0, 1.01), strict=True):
        launch.value = value
    verdict, why = judge(state, probe)
    assert verdict == "good", why
    assert "its best launch (1.01) runs at the level of its good neighbour" in why, why


def test_a_probe_far_beyond_the_bad_end_is_never_good_on_a_noise_other_slowdowns_widened() -> None:
    """Werkzeug's culprit commit reads 420-690 ms beside a 13 ms bad end; another commit's
    launches (4,682 and 452) had widened the noise until 618 "ran at the level" of a 2.3 ms
    neighbour (p = 0.077), and the culprit was taken for good."""
    state, probe = _range()
    for launch, value in zip(state.configs[probe.key].launches, (688.0, 618.0), strict=True):
        launch.value = value
    other = RangeState(sha="f" * 40, subject="another commit")
    _commit_config(state, other)
    for value in (20000.0, 100.0):  # a spread wider still than werkzeug's
        state.next_request += 1
        launch = Launch(value=value, samples=[value], log="", request=state.next_request)
        state.configs[other.key].launches.append(launch)
    verdict, why = judge(state, probe)
    assert verdict == "bad", why
