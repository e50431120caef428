"""Speculative decoding's throughput, split into the part that moved.

A speculative server's output rate is tokens per verify cycle over the cycle's time: on a log
scale Δlog(tok/s) = Δlog(accept length) − Δlog(cycle time), up to the time outside decode
(prefill, scheduling). A regression is one or the other: the verify (or draft) step got slower,
or fewer drafts are accepted; searching the throughput when only one moved searches the sum of
a signal and the other part's noise. Each part's change between two states is a pooled t-test
on the launches' log values (stats), its share of the throughput gap has a 95 % interval.
"""

from __future__ import annotations

import math
from typing import Literal

from agent.result import PartResult as Part
from agent.state import InvestigationState, Variant
from agent.stats import SEARCH_ALPHA, level, p_equal, pooled_noise, t_ppf

THROUGHPUT, ACCEPT, CYCLE = "tok_s", "accept_len", "verify_ms"
PARTS = {ACCEPT: "accept_length", CYCLE: "cycle_ms"}  # the --json names
WORSE: dict[str, Literal["higher", "lower"]] = {
    THROUGHPUT: "lower",
    ACCEPT: "lower",
    CYCLE: "higher",
}
LEADS, FOLLOWS = 0.5, 0.2  # a part "moved alone": at least this share, the other under that


def _values(config: Variant, name: str) -> list[float]:
    counted = [launch for launch in config.launches if not launch.disturbed]
    return [launch.metrics[name] for launch in counted if launch.metrics.get(name, 0) > 0]


def _change(bad: list[float], good: list[float]) -> tuple[float, float, float]:
    """(log change bad - good, its standard error, two-sided p) with the pooled noise."""
    noise = pooled_noise([bad, good])
    se = noise.sigma * math.sqrt(1 / len(bad) + 1 / len(good))
    delta = level(bad) - level(good)
    return delta, se, p_equal(level(bad), len(bad), level(good), len(good), noise)


def decompose(state: InvestigationState, after_key: str | None = None) -> dict[str, Part] | None:
    """The throughput and its two parts for bad, good and (when measured) the state after the
    fix; None where the launches carry no accept length and cycle time (not speculative)."""
    bad, good = state.configs.get(state.bad_key), state.configs.get(state.good_key)
    if bad is None or good is None:  # ended before the references were set up
        return None
    after = state.configs.get(after_key or "")
    series = {name: (_values(bad, name), _values(good, name)) for name in (THROUGHPUT, *PARTS)}
    if any(len(b) < 2 or len(g) < 2 for b, g in series.values()):
        return None
    total = level(series[THROUGHPUT][0]) - level(series[THROUGHPUT][1])
    out = {}
    for name, (b, g) in series.items():
        delta, se, p = _change(b, g)
        sign = -1 if name == CYCLE else 1  # a longer cycle lowers the throughput
        share = ci = None
        if total and math.isfinite(se):
            t = t_ppf(0.975, len(b) + len(g) - 2)
            ends = sorted(sign * (delta + k * t * se) / total for k in (-1, 1))
            share, ci = sign * delta / total, [round(ends[0], 3), round(ends[1], 3)]
        done = _values(after, name) if after is not None else []
        out[PARTS.get(name, name)] = Part(
            bad=math.exp(level(b)),
            good=math.exp(level(g)),
            after_fix=math.exp(level(done)) if done else None,
            share=None if share is None else round(share, 3),
            share_ci=ci,
            p=p,
        )
    return out


def moved_alone(parts: dict[str, Part]) -> str | None:
    """The metric to search when one part moved and the other did not: accept_len or
    verify_ms; None when both moved (the throughput stays the search's metric)."""
    accept, cycle = parts[PARTS[ACCEPT]], parts[PARTS[CYCLE]]
    for lead, other, metric in ((accept, cycle, ACCEPT), (cycle, accept, CYCLE)):
        quiet = other.p > SEARCH_ALPHA or (other.share or 0) < FOLLOWS
        if lead.p <= SEARCH_ALPHA and (lead.share or 0) >= LEADS and quiet:
            return metric
    return None


def switch_metric(state: InvestigationState, metric: str) -> None:
    """Judge every launch, past and future, on `metric` (each launch recorded it)."""
    state.metric, state.worse = metric, WORSE[metric]  # type: ignore[assignment]
    for config in state.configs.values():
        for launch in config.launches:
            if metric in launch.metrics:
                launch.value = launch.metrics[metric]


def describe(parts: dict[str, Part], metric: str) -> str:
    """One transcript line: each part's change, share and p, and what the search measures."""
    accept, cycle = parts[PARTS[ACCEPT]], parts[PARTS[CYCLE]]

    def words(name: str, part: Part, unit: str) -> str:
        change = part.bad / part.good - 1
        share = "" if part.share is None else f", {part.share:.0%} of the gap"
        return (
            f"{name} {part.good:.3g}{unit} -> {part.bad:.3g}{unit} ({change:+.0%}, "
            f"p = {part.p:.2g}{share})"
        )

    head = {
        ACCEPT: "the search runs on acceptance (accept length)",
        CYCLE: "the search runs on the cycle time (verify_ms)",
    }.get(metric, f"the search runs on {metric}: both parts moved")
    return f"{head}: {words('accept length', accept, '')}; {words('cycle', cycle, ' ms')}"
