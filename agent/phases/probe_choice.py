"""Which state a bisection launches next: the one whose verdict tells most about where the
first bad commit is (agent/phases/bisect.py)."""

from __future__ import annotations

import math

from agent.state import Bisection


def next_probe(b: Bisection) -> int | None:
    """The state between the latest good and the earliest bad that tells most about where the
    first bad commit is: the expected information of its verdict, the entropy of the prior mass
    it splits times the chance it runs at all. Commits that do not run come in runs (a move, a
    rename half done: eleven in a row in mistune's history), so after k skips a neighbour at
    distance d of one is taken not to run with chance (k / (k + 1)) ** d, and one between two
    skipped commits (nothing measured runs between them) is tried last. With no skip, it halves
    the prior mass; ties go to the middle."""
    inner = [i for i in range(b.low + 1, b.high) if b.states[i].verdict != "skipped"]
    if not inner:
        return None
    mass = {i: b.states[i].weight for i in range(b.low + 1, b.high + 1)}
    total = sum(mass.values())
    skipped = [i for i in range(b.low + 1, b.high) if b.states[i].verdict == "skipped"]
    near = len(skipped) / (len(skipped) + 1)

    def runs(m: int) -> float:
        if not skipped:
            return 1.0
        if skipped[0] < m < skipped[-1]:
            return 0.0
        return 1.0 - near ** min(abs(m - i) for i in skipped)

    def rank(m: int) -> tuple[float, float]:
        below = sum(w for i, w in mass.items() if i <= m) / total if total else 0.5
        # rounded: p and 1 - p split equally well, whatever the last bit of the float says
        return -round(runs(m) * _entropy(below), 9), abs(m - (b.low + b.high) / 2)

    return min(inner, key=rank)


def _entropy(p: float) -> float:
    """Of a verdict that is good with chance p (bits)."""
    return 0.0 if p <= 0 or p >= 1 else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))
