"""Each cause's share of the gap, with a confidence interval (on the log scale, given the gap).

A configuration X built from the bad state restores r = (log bad - log X) / (log bad - log good)
of the gap. Its interval is r +- t * se / gap, with se from the pooled launch noise over X's and
the bad reference's launches, t at 95 % on the noise's degrees of freedom; the gap's own
uncertainty is left out (it is re-tested separately, at the strict level).
"""

from __future__ import annotations

import math

from agent.levels import noise
from agent.state import InvestigationState
from agent.stats import MIN_NOISE_DF, level, t_ppf

CONFIDENCE = 0.95


def _half_width(state: InvestigationState, gap: float, *sizes: int) -> float:
    n = noise(state)
    if n.df < MIN_NOISE_DF or not math.isfinite(n.sigma):
        return math.inf
    t = t_ppf(0.5 + CONFIDENCE / 2, n.df)
    return t * n.sigma * math.sqrt(sum(1 / size for size in sizes)) / abs(gap)


def _gap(state: InvestigationState) -> float | None:
    bad, good = state.configs[state.bad_key].values, state.configs[state.good_key].values
    gap = level(bad) - level(good) if bad and good else 0.0
    return gap or None


def restored_share(state: InvestigationState, key: str) -> tuple[float, float, float] | None:
    """(r, low, high) for config `key`; None when it or a reference has no launches."""
    x, bad = state.configs[key].values, state.configs[state.bad_key].values
    gap = _gap(state)
    if not x or gap is None:
        return None
    r = (level(bad) - level(x)) / gap
    half = _half_width(state, gap, len(x), len(bad))
    return r, r - half, r + half


def share_between(
    state: InvestigationState, more: str, less: str
) -> tuple[float, float, float] | None:
    """The share of the gap between two configs (r of `more` minus r of `less`): a member's
    share from the set applied with and without it."""
    a, b = state.configs[more].values, state.configs[less].values
    gap = _gap(state)
    if not a or not b or gap is None:
        return None
    r = (level(a) - level(b)) / gap  # `more` sits nearer the bad end
    half = _half_width(state, gap, len(a), len(b))
    return r, r - half, r + half


def contrast_share(
    state: InvestigationState, pairs: list[tuple[list[float], list[float]]]
) -> tuple[float, float, float] | None:
    """The share of the gap a change makes, averaged over contexts: each pair is (launches
    with it, launches without it) in one context (stats.p_contrast's pairs); None unmeasured."""
    gap = _gap(state)
    if gap is None or not all(a and b for a, b in pairs):
        return None
    r = sum(level(a) - level(b) for a, b in pairs) / len(pairs) / gap
    sizes = [len(values) for pair in pairs for values in pair]
    half = _half_width(state, gap, *sizes) / len(pairs)
    return r, r - half, r + half


def units_share(state: InvestigationState, key: str) -> float:
    """The share of the gap a state sits above the good reference in the metric's own units
    (geometric means), its level taken three noise SDs towards bad: over a 10,000x gap a 37x
    step is 40 % of the log gap and 0.4 % of the added time. A launch disturbed by load only
    moves it up. A first bad commit's probe and what is left after reverting a culprit set are
    both judged by it."""
    x, b, g = (level(state.configs[k].values) for k in (key, state.bad_key, state.good_key))
    sigma = noise(state).sigma
    x += 3 * (sigma if math.isfinite(sigma) else 0.0) * (1 if b > g else -1)
    return (math.exp(x) - math.exp(g)) / (math.exp(b) - math.exp(g)) if b != g else 0.0


def clipped(values: tuple[float, float, float]) -> list[float]:
    """A share and its interval, each clipped to [0, 1] and rounded, as the result gives it."""
    return [round(max(0.0, min(1.0, v)), 3) for v in values]
