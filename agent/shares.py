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
from agent.stats import MIN_NOISE_DF, level

CONFIDENCE = 0.95


def restored_share(state: InvestigationState, key: str) -> tuple[float, float, float] | None:
    """(r, low, high) for config `key`; None when it or a reference has no launches."""
    from scipy import stats

    x = state.configs[key].values
    bad, good = state.configs[state.bad_key].values, state.configs[state.good_key].values
    if not (x and bad and good):
        return None
    gap = level(bad) - level(good)
    if gap == 0:
        return None
    r = (level(bad) - level(x)) / gap
    n = noise(state)
    if n.df < MIN_NOISE_DF or not math.isfinite(n.sigma):
        return r, -math.inf, math.inf
    half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, n.df)) * n.sigma
    half *= math.sqrt(1 / len(x) + 1 / len(bad)) / abs(gap)
    return r, r - half, r + half


def clipped(values: tuple[float, float, float]) -> list[float]:
    """A share and its interval, each clipped to [0, 1] and rounded, as the result gives it."""
    return [round(max(0.0, min(1.0, v)), 3) for v in values]
