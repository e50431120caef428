"""Where the time moved: the functions whose time per unit of the bench differs between the bad and
the good profile.

A function's time per unit is the share of the samples with it on the stack (inclusive) or at
its top (self), times the bench's value where that is a time (a latency), or its inverse where
it is a rate (tokens per second: the time per token). The interval is the sampling's own (a
binomial share of the n samples taken, or, where the sampler counted in batches of time and that
is wider, the batch means' error with Student's t on their degrees of freedom: consecutive looks
are alike), not the launches' noise; the share is of the gap between the two values. Self time
names the function that spends it (a regex run from it, a loop; in a torch trace the kernel, and
the function that launched it); inclusive time every function on the way to it (the outermost of
a thread, on the way to all it does, is left out by the caller: agent/profile/time_moved.py).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel

from tools.profile.batch_means import MIN_BATCHES
from tools.profile.samples import Profile

Z95 = 1.96
Change = Literal["grew", "shrank", "appeared", "vanished"]
Source = Literal["sampled", "gpu"]  # the sampler's CPU time, or a torch trace's kernel time
SHOWN = 12


class Mover(BaseModel):
    function: str  # "path:qualname"
    kind: Literal["self", "inclusive"]
    source: Source = "sampled"
    bad: float  # its time per unit in the bad state (the metric's unit)
    good: float
    delta: float  # bad - good
    low: float  # the delta's 95 % interval
    high: float
    share: float | None  # delta / (bad value - good value), as times per unit
    change: Change


def time_unit(unit: str, higher_is_worse: bool) -> tuple[str, float]:
    """How a time per unit is written for a metric in `unit`, and the factor to write it so:
    a latency in its own unit; a rate (`tok/s`) as milliseconds per one of its units."""
    if higher_is_worse:
        return unit, 1.0
    per = unit.removesuffix("/s") if unit.endswith("/s") else f"1/({unit})"
    return f"ms per {per}", 1000.0 if unit.endswith("/s") else 1.0


def per_unit(value: float, higher_is_worse: bool) -> float:
    """The time one unit of the bench takes: the value itself for a time, 1/value for a rate."""
    return value if higher_is_worse else (1.0 / value if value else 0.0)


def _error(profile: Profile, function: str, column: int, share: float) -> float:
    """A share's standard error: the binomial one of the samples taken, or the batch means'
    where that is wider."""
    binomial = math.sqrt(share * (1 - share) / max(profile.samples, 1))
    batches = profile.errors.get(function)
    return max(binomial, batches[column]) if batches else binomial


def _quantile(bad: Profile, good: Profile) -> float:
    """The 95 % quantile for the intervals: Student's t on the batches' degrees of freedom
    where both profiles were counted in batches (the smaller's, as Welch's test's
    conservative bound), else the normal one."""
    batches = min(bad.batches if bad.errors else 0, good.batches if good.errors else 0)
    if batches < MIN_BATCHES:
        return Z95
    from scipy.special import stdtrit  # not scipy.stats: half a second to import

    return float(stdtrit(batches - 1, 0.975))


def movers(
    bad: Profile,
    good: Profile,
    bad_value: float,
    good_value: float,
    higher_is_worse: bool,
    kind: Literal["self", "inclusive"] = "self",
    source: Source = "sampled",
) -> list[Mover]:
    """The functions whose time per unit moved significantly, the largest rise first."""
    if not bad.seconds or not good.seconds:
        return []
    unit_bad = per_unit(bad_value, higher_is_worse)
    unit_good = per_unit(good_value, higher_is_worse)
    gap = unit_bad - unit_good
    column = 0 if kind == "inclusive" else 1
    quantile = _quantile(bad, good)
    found = []
    for function in bad.functions.keys() | good.functions.keys():
        p_bad = bad.functions.get(function, (0.0, 0.0))[column] / bad.seconds
        p_good = good.functions.get(function, (0.0, 0.0))[column] / good.seconds
        t_bad, t_good = p_bad * unit_bad, p_good * unit_good
        spread = quantile * math.hypot(
            unit_bad * _error(bad, function, column, p_bad),
            unit_good * _error(good, function, column, p_good),
        )
        delta = t_bad - t_good
        if abs(delta) <= spread or (p_bad == 0 and p_good == 0):
            continue
        change: Change = (
            "appeared"
            if p_good == 0
            else "vanished"
            if p_bad == 0
            else "grew"
            if delta > 0
            else "shrank"
        )
        found.append(
            Mover(
                function=function,
                kind=kind,
                source=source,
                bad=t_bad,
                good=t_good,
                delta=delta,
                low=delta - spread,
                high=delta + spread,
                share=delta / gap if gap else None,
                change=change,
            )
        )
    return sorted(found, key=lambda m: -m.delta)
