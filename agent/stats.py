"""The decision rule: launch-to-launch noise, the fraction of the gap a state restores, verdicts.

The unit of evidence is a launch (one statistic per launch: the median over its requests, or the
best of them where the config asks), since launch-to-launch noise dominates serving benchmarks
and requests within one launch share it.
Everything is judged on a relative (log) scale: launch noise is multiplicative (a launch 10 %
slow at 15 ms is 10 % slow at 60 ms), so noise pooled over levels far apart stays honest, and a
state's level is the geometric mean of its launches. Noise is the pooled standard deviation of
log values of replicated launches (configurations found equivalent to a reference pool with it).
A state X is scored by r = (log bad - log X) / (log bad - log good): 1 restores the good value,
0 is still bad. Verdicts need significance and magnitude (as Perfherder does):

    restored  X differs from bad (p <= alpha) and r >= 0.75
    none      X differs from good (p <= alpha) and r <= 0.25
    partial   X differs from both and 0.25 < r < 0.75, on two launches or more
    unknown   otherwise: one more launch, up to a cap (as Pinpoint and tachometer do)

No verdict rests on an assumed noise figure: until replicates give the pooled noise two degrees
of freedom, every comparison is "unknown". A bisection of commits (agent/phases/bisect.py)
starts on one: Student's t on one degree of freedom (12.7 at 5 %, two-sided) pays for how
little one pair of replicates says about the noise, so a 10x gap is bisected after three
launches, while a 40 % gap at 3 % noise waits for a fourth, as before. Shares and remainders
(the hunk search, confirmation) keep two: on one, a 13 % second cause went unseen.

Two levels of significance: the search's navigation (which half to go into) at SEARCH_ALPHA,
a wrong turn being caught by confirmation; every verdict the report states (the gap,
confirmation both ways, each member needed) at ALPHA.
"""

from __future__ import annotations

import math
import statistics
from typing import Literal

from pydantic import BaseModel

ALPHA = 0.01
SEARCH_ALPHA = 0.05
EQUIVALENCE_ALPHA = 0.05  # one-sided, as in TOST: "no regression" is shown, not assumed
MIN_NOISE_DF = 2
BISECT_MIN_DF = 1  # the calibration before a bisection, and its probes
MIN_RELATIVE_GAP = 0.02  # below 2 % a "regression" is not worth a bisection
RESTORED_FROM = 0.75  # r from which a state restores the good value (see the table above)
NONE_UP_TO = 0.25  # r up to which it restores none of it; a partial share lies between
Verdict = Literal["restored", "none", "partial", "unknown"]


def launch_value(
    samples: list[float], per_launch: Literal["median", "best"], worse: Literal["higher", "lower"]
) -> float:
    """One launch's statistic over its requests (`[bench] per_launch`)."""
    if per_launch == "median":
        return statistics.median(samples)
    return min(samples) if worse == "higher" else max(samples)


KEPT_SAMPLES = 1001  # a launch's requests kept in the state and the transcript, at most


def kept_samples(values: list[float]) -> list[float]:
    """What a session keeps of a launch's requests: all of them, or, for a bench that reports
    millions (a value per token), that many order statistics evenly spaced from the least to
    the greatest (their median is within a rank of the median). The launch's value is read
    from all of them first; copying millions into every checkpoint took minutes and
    gigabytes."""
    if len(values) <= KEPT_SAMPLES:
        return values
    ranked, last = sorted(values), len(values) - 1
    return [ranked[round(i * last / (KEPT_SAMPLES - 1))] for i in range(KEPT_SAMPLES)]


NOISE_FLOOR = 0.003  # 0.3 %: no bench repeats better than that, whatever a few launches say
TINY = 1e-12  # a value of 0 (a garbage bench) stays finite on the log scale


class Noise(BaseModel):
    sigma: float  # standard deviation of a launch's log value: about its relative noise
    df: int


def logs(values: list[float]) -> list[float]:
    return [math.log(max(v, TINY)) for v in values]


def level(values: list[float]) -> float:
    """The mean on the log scale (the log of the geometric mean)."""
    return statistics.fmean(logs(values))


def pooled_noise(groups: list[list[float]]) -> Noise:
    """Pooled SD of the log values of groups of equivalent launches (floored at 0.3 %)."""
    ss, df = 0.0, 0
    for group in groups:
        if len(group) >= 2:
            logged = logs(group)
            mean = statistics.fmean(logged)
            ss += sum((v - mean) ** 2 for v in logged)
            df += len(group) - 1
    sigma = math.sqrt(ss / df) if df else math.inf
    return Noise(sigma=max(sigma, NOISE_FLOOR), df=df)


def t_sf(x: float, df: float) -> float:
    """Student's t survival function, from scipy.special: the distribution alone, without the
    half second (of every command's start) that importing scipy.stats costs."""
    from scipy.special import stdtr

    return float(stdtr(df, -x))


def t_ppf(q: float, df: float) -> float:
    """Student's t quantile (scipy.special, as t_sf)."""
    from scipy.special import stdtrit

    return float(stdtrit(df, q))


def p_equal(
    a_level: float, n_a: int, b_level: float, n_b: int, noise: Noise, min_df: int = MIN_NOISE_DF
) -> float:
    """Two-sided p of a pooled t-test that two configurations share one level (log means)."""
    if noise.df < min_df or not math.isfinite(noise.sigma):
        return 1.0
    se = noise.sigma * math.sqrt(1 / n_a + 1 / n_b)
    return 2 * t_sf(abs(a_level - b_level) / se, noise.df)


def p_contrast(pairs: list[tuple[list[float], list[float]]], noise: Noise) -> tuple[float, float]:
    """(mean log difference, two-sided p) of `with - without` over pairs of configurations that
    differ by one change, each pair in its own context: one t-test of the average effect, so
    that two contexts of one change weigh as one verdict with the launches of both."""
    effect = statistics.fmean(level(a) - level(b) for a, b in pairs)
    if noise.df < MIN_NOISE_DF or not math.isfinite(noise.sigma):
        return effect, 1.0
    spread = sum(1 / len(a) + 1 / len(b) for a, b in pairs)
    se = noise.sigma * math.sqrt(spread) / len(pairs)
    return effect, 2 * t_sf(abs(effect) / se, noise.df)


class Score(BaseModel):
    r: float  # fraction of the gap restored (or reproduced, for states built from good)
    p_vs_bad: float
    p_vs_good: float
    verdict: Verdict
    launches: int


def score(
    values: list[float],
    bad: list[float],
    good: list[float],
    noise: Noise,
    against: Literal["bad", "good"] = "bad",
    alpha: float = ALPHA,
    min_df: int = MIN_NOISE_DF,
) -> Score:
    """How far `values` (launch statistics of one state) sit between bad and good.

    against="bad": r is the fraction restored; "good": the fraction of the regression reproduced.
    """
    x, b, g = level(values), level(bad), level(good)
    gap = b - g
    r = (b - x) / gap if gap else 0.0
    if against == "good":
        r = 1.0 - r
    p_bad = p_equal(x, len(values), b, len(bad), noise, min_df)
    p_good = p_equal(x, len(values), g, len(good), noise, min_df)
    near_good, near_bad = (p_good, p_bad) if against == "bad" else (p_bad, p_good)
    verdict: Verdict = "unknown"
    if near_bad <= alpha and r >= RESTORED_FROM:
        verdict = "restored"
    elif near_good <= alpha and r <= NONE_UP_TO:
        verdict = "none"
    elif (
        near_bad <= alpha
        and near_good <= alpha
        and NONE_UP_TO < r < RESTORED_FROM
        and len(values) > 1
    ):
        verdict = "partial"  # one launch between the ends may be a disturbed one: a second decides
    return Score(r=r, p_vs_bad=p_bad, p_vs_good=p_good, verdict=verdict, launches=len(values))


class Calibration(BaseModel):
    status: Literal["regression", "no_regression", "inconclusive", "unknown"]
    bad: float  # geometric means
    good: float
    gap: float  # bad / good - 1
    noise: Noise
    p: float
    upper: float  # one-sided upper confidence bound of the gap, in the worse direction
    reason: str


def gap_bound(
    bad: list[float], good: list[float], noise: Noise, worse_sign: int, alpha: float
) -> float:
    """The one-sided (1 - alpha) upper bound of the worse-direction log gap (inf unmeasured)."""
    if noise.df < MIN_NOISE_DF or not math.isfinite(noise.sigma):
        return math.inf
    se = noise.sigma * math.sqrt(1 / len(bad) + 1 / len(good))
    return (level(bad) - level(good)) * worse_sign + t_ppf(1 - alpha, noise.df) * se


def calibrate(
    bad: list[float],
    good: list[float],
    noise: Noise,
    worse: Literal["higher", "lower"],
    max_each: int,
    margin: float,
    alpha: float = SEARCH_ALPHA,
    min_df: int = MIN_NOISE_DF,
) -> Calibration:
    """Is there a regression worth isolating? "unknown" asks for another pair of launches.

    regression: the gap is significant at `alpha` and at least MIN_RELATIVE_GAP in the worse
    direction; no_regression: the gap is significantly smaller than `margin` (a log gap: an
    equivalence test, one-sided at EQUIVALENCE_ALPHA); inconclusive: neither after `max_each`
    launches of each (the regression, if any, is within this bench's noise).
    """
    worse_sign = 1 if worse == "higher" else -1
    log_gap = level(bad) - level(good)
    b, g = math.exp(level(bad)), math.exp(level(good))
    p = p_equal(level(bad), len(bad), level(good), len(good), noise, min_df)
    upper = gap_bound(bad, good, noise, worse_sign, EQUIVALENCE_ALPHA)
    said = (
        f"bad {b:.3g} vs good {g:.3g} ({math.expm1(log_gap):+.1%}), launch noise "
        f"{noise.sigma:.1%} from {noise.df} df, p = {p:.2g}"
    )
    status: Literal["regression", "no_regression", "inconclusive", "unknown"] = "unknown"
    if p <= alpha and log_gap * worse_sign >= math.log1p(MIN_RELATIVE_GAP):
        status = "regression"
    elif upper < margin and min(len(bad), len(good)) >= 2:
        status = "no_regression"
        said += (
            f": the gap is at most {math.expm1(upper):+.1%} ({1 - EQUIVALENCE_ALPHA:.0%} "
            f"upper bound), under the {math.expm1(margin):.1%} the symptom implies"
        )
    elif min(len(bad), len(good)) >= max_each:
        status = "inconclusive"
        said += (
            f": after {len(bad)} and {len(good)} launches the gap is neither significant nor "
            f"shown smaller than {math.expm1(margin):.1%}: the regression, if any, is within "
            "this bench's noise"
        )
    return Calibration(
        status=status,
        bad=b,
        good=g,
        gap=math.expm1(log_gap),
        noise=noise,
        p=p,
        upper=upper,
        reason=said if status != "unknown" else "need another pair of launches",
    )
