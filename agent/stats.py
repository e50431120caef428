"""The decision rule: launch-to-launch noise, the fraction of the gap a state restores, verdicts.

The unit of evidence is a launch (one statistic per launch: the median over its requests, or the
best of them where the config asks), since launch-to-launch noise dominates serving benchmarks
and requests within one launch share it.
Noise is the pooled standard deviation of replicated launches (configurations found equivalent
to a reference pool with it). A state X is scored by r = (bad - X) / (bad - good): 1 restores
the good value, 0 is still bad. Verdicts need significance and magnitude (as Perfherder does):

    restored  X differs from bad (p <= alpha) and r >= 0.75
    none      X differs from good (p <= alpha) and r <= 0.25
    partial   X differs from both and 0.25 < r < 0.75
    unknown   otherwise: one more launch, up to a cap (as Pinpoint and tachometer do)
"""

from __future__ import annotations

import math
import statistics
from typing import Literal

from pydantic import BaseModel

ALPHA = 0.01
MIN_RELATIVE_GAP = 0.02  # below 2 % a "regression" is not worth a bisection
Verdict = Literal["restored", "none", "partial", "unknown"]


def launch_value(samples: list[float], per_launch: Literal["median", "best"],
                 worse: Literal["higher", "lower"]) -> float:
    """One launch's statistic over its requests (`[bench] per_launch`)."""
    if per_launch == "median":
        return statistics.median(samples)
    return min(samples) if worse == "higher" else max(samples)


class Noise(BaseModel):
    sigma: float
    df: int


def pooled_noise(groups: list[list[float]], scale: float) -> Noise:
    """Pooled SD of groups of equivalent launches (floored at 0.3 % of `scale`)."""
    ss, df = 0.0, 0
    for group in groups:
        if len(group) >= 2:
            mean = statistics.fmean(group)
            ss += sum((v - mean) ** 2 for v in group)
            df += len(group) - 1
    sigma = math.sqrt(ss / df) if df else math.inf
    return Noise(sigma=max(sigma, 0.003 * abs(scale)), df=df)


def p_equal(a_mean: float, n_a: int, b_mean: float, n_b: int, noise: Noise) -> float:
    """Two-sided p of a pooled t-test that two configurations share one mean."""
    from scipy import stats

    if noise.df == 0 or not math.isfinite(noise.sigma):
        return 1.0
    se = noise.sigma * math.sqrt(1 / n_a + 1 / n_b)
    return float(2 * stats.t.sf(abs(a_mean - b_mean) / se, noise.df))


class Score(BaseModel):
    r: float  # fraction of the gap restored (or reproduced, for states built from good)
    p_vs_bad: float
    p_vs_good: float
    verdict: Verdict
    launches: int


def score(values: list[float], bad: list[float], good: list[float], noise: Noise,
          against: Literal["bad", "good"] = "bad") -> Score:
    """How far `values` (launch statistics of one state) sit between bad and good.

    against="bad": r is the fraction restored; "good": the fraction of the regression reproduced.
    """
    x, b, g = statistics.fmean(values), statistics.fmean(bad), statistics.fmean(good)
    gap = b - g
    r = (b - x) / gap if gap else 0.0
    if against == "good":
        r = 1.0 - r
    p_bad = p_equal(x, len(values), b, len(bad), noise)
    p_good = p_equal(x, len(values), g, len(good), noise)
    near_good, near_bad = (p_good, p_bad) if against == "bad" else (p_bad, p_good)
    verdict: Verdict = "unknown"
    if near_bad <= ALPHA and r >= 0.75:
        verdict = "restored"
    elif near_good <= ALPHA and r <= 0.25:
        verdict = "none"
    elif near_bad <= ALPHA and near_good <= ALPHA and 0.25 < r < 0.75:
        verdict = "partial"
    return Score(r=r, p_vs_bad=p_bad, p_vs_good=p_good, verdict=verdict, launches=len(values))


class Calibration(BaseModel):
    status: Literal["regression", "no_regression", "unknown"]
    bad: float
    good: float
    gap: float
    noise: Noise
    p: float
    reason: str


def calibrate(bad: list[float], good: list[float], noise: Noise, worse: Literal["higher", "lower"],
              max_each: int) -> Calibration:
    """Is there a regression worth isolating? "unknown" asks for another pair of launches."""
    b, g = statistics.fmean(bad), statistics.fmean(good)
    gap = b - g
    p = p_equal(b, len(bad), g, len(good), noise)
    worse_sign = 1 if worse == "higher" else -1
    floor = max(MIN_RELATIVE_GAP * abs(g), 3 * noise.sigma if noise.df else 0.0)
    common = dict(bad=b, good=g, gap=gap, noise=noise, p=p)
    if p <= ALPHA and gap * worse_sign >= floor:
        return Calibration(status="regression", reason=(
            f"bad {b:.3g} vs good {g:.3g}: gap {gap:+.3g} ({gap / g:+.1%}), noise sigma "
            f"{noise.sigma:.3g} from {noise.df} df, p = {p:.2g}"), **common)
    if min(len(bad), len(good)) >= max_each or (noise.df and abs(gap) < floor and p > ALPHA
                                                 and min(len(bad), len(good)) >= 3):
        return Calibration(status="no_regression", reason=(
            f"bad {b:.3g} vs good {g:.3g}: gap {gap:+.3g} ({gap / g:+.1%}) is within noise or "
            f"under {MIN_RELATIVE_GAP:.0%} (sigma {noise.sigma:.3g}, p = {p:.2g})"), **common)
    return Calibration(status="unknown", reason="need another pair of launches", **common)
