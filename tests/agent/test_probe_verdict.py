"""A probe between the ends is "part of the way" only against its good neighbour as the
machine runs now: a load that rose after the references were measured lifts a good commit
between the ends (werkzeug's 1 ms end read 1.4-2.2 ms beside two busy ranks), and the
bisection then searched the whole range by hunk."""

from __future__ import annotations

from agent.levels import ensure_config
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


def test_a_true_step_part_of_the_way_stays_bad() -> None:
    state, probe = _range()
    probe.recheck = state.good_key
    _good_now(state, 1.02)  # the good tree still reads 1 ms: the probe holds part of the gap
    verdict, why = judge(state, probe)
    assert verdict == "bad" and why.startswith(PART_WAY)


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
