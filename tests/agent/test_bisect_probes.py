"""Which commit a bisection probes next, where commits do not run: they come in runs (a move,
a rename half done), and the bisection must neither walk a run one commit at a time nor keep to
the edges of the range, where a probe halves nothing."""

from __future__ import annotations

from agent.phases.bisect import _probe
from agent.state import Bisection, RangeState


def bisect(weights: list[float], broken: set[int], first_bad: int) -> tuple[list[int], int]:
    """The probes, in order, over states 0 (good) .. len-1 (bad), and the first bad named."""
    states = [
        RangeState(sha=str(i), subject=f"commit {i}", weight=w) for i, w in enumerate(weights)
    ]
    states[0].verdict, states[-1].verdict = "good", "bad"
    b = Bisection(states=states, low=0, high=len(states) - 1, range_good_sha="0")
    probes = []
    while (at := _probe(b)) is not None:
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
