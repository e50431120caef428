"""Which commit a bisection probes next, where commits do not run: they come in runs (a move,
a rename half done), and the bisection must neither walk a run one commit at a time nor keep to
the edges of the range, where a probe halves nothing."""

from __future__ import annotations

from agent.phases.bisect import _focus
from agent.phases.probe_choice import next_probe
from agent.state import Bisection, Hypothesis, RangeState
from tests.conftest import bare_state
from tools.repo.commit_groups import CommitGroups, RangeCommit


def bisect(weights: list[float], broken: set[int], first_bad: int) -> tuple[list[int], int]:
    """The probes, in order, over states 0 (good) .. len-1 (bad), and the first bad named."""
    states = [
        RangeState(sha=str(i), subject=f"commit {i}", weight=w) for i, w in enumerate(weights)
    ]
    states[0].verdict, states[-1].verdict = "good", "bad"
    b = Bisection(states=states, low=0, high=len(states) - 1, range_good_sha="0")
    probes = []
    while (at := next_probe(b)) is not None:
        probes.append(at)
        if at in broken:
            b.states[at].verdict = "skipped"
        elif at >= first_bad:
            b.states[at].verdict, b.high = "bad", at
        else:
            b.states[at].verdict, b.low = "good", at
    return probes, b.high


def test_without_skips_it_halves_the_prior_mass() -> None:
    assert bisect([1.0] * 17, set(), 5)[0][0] == 8
    # nearly all the mass on commit 3: the probe halves the mass, not the count
    weights = [1.0, 0.1, 0.1, 5.0, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0]
    assert bisect(weights, set(), 3)[0][0] == 3


def test_a_run_of_broken_commits_is_neither_walked_nor_edged_around() -> None:
    """Twelve commits in a row that do not run, the first bad right after them: git bisect
    needs about log2(100) = 7 probes plus its skips. Keeping the greatest distance from every
    skipped commit once took 24 probes here, twelve of them skipped."""
    probes, first_bad = bisect([1.0] * 100, set(range(40, 52)), 53)
    assert first_bad == 53
    assert len(probes) <= 10, probes
    assert len([p for p in probes if 40 <= p < 52]) <= 3, probes


def test_commits_between_two_skipped_ones_are_tried_last() -> None:
    """The first bad commit (30) inside a run of broken ones (16..31): every commit of the run
    is tried, as git bisect tries them, but only once nothing outside it is left."""
    broken = set(range(16, 32)) - {30}
    probes, first_bad = bisect([1.0] * 60, broken, 30)
    assert first_bad == 30
    outside = [i for i, p in enumerate(probes) if not 16 <= p < 32]
    inside = [i for i, p in enumerate(probes) if 16 <= p < 32]
    assert len(outside) <= 7 and len(probes) <= 24, probes
    # once two skips bound the run, what lies between them waits for the commits outside it
    assert max(outside) < sorted(inside)[-3], probes


def _focused(weights: list[float], at: int, share: float) -> list[float]:
    """`weights` with commit `at` holding `share` of the mass (agent.phases.bisect._focus)."""
    states = [RangeState(sha=str(i), subject=f"c{i}", weight=w) for i, w in enumerate(weights)]
    state = bare_state()
    commits = [RangeCommit(sha=str(i), subject=f"c{i}") for i in range(1, len(weights))]
    state.commits = CommitGroups(commits=commits, of={"hunk-1": at - 1, "hunk-2": 0})
    state.hypotheses = {
        "hunk-1": Hypothesis(candidate="hunk-1", prior=5, reasons=[], profile_weight=share),
        "hunk-2": Hypothesis(candidate="hunk-2", prior=1, reasons=[], profile_weight=0.2),
    }
    _focus(state, states, None)
    return [s.weight for s in states]


def test_a_commit_the_profile_points_at_is_probed_with_its_parent_first() -> None:
    """Pinpoint's order: the commit holding the hunk whose function carries the gap, then its
    parent; two probes name it where a plain bisection of 33 commits needs five. Where the
    profile is wrong, the bisection goes on and costs a probe or two more."""
    flat = [1.0] * 34
    assert len(bisect(flat, set(), 21)[0]) == 5
    weights = _focused(flat, 21, 0.96)
    assert abs(weights[21] / sum(weights[1:]) - 0.9) < 1e-9  # capped at 90 %
    probes, first_bad = bisect(weights, set(), 21)
    assert first_bad == 21 and sorted(probes) == [20, 21], probes
    probes, first_bad = bisect(weights, set(), 9)  # the profile pointed elsewhere
    assert first_bad == 9 and len(probes) <= 7, probes
    assert _focused(flat, 21, 0.3) == flat  # a weak tie moves nothing
    heavy = [1.0] * 10 + [100.0] + [1.0] * 5  # it holds more than the tie's share already
    assert _focused(heavy, 10, 0.6) == heavy
