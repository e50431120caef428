"""Calibrate: is there a regression, how large, and how noisy are launches?

The bad state's first launch comes from gathering facts. One launch of the good state follows.
A gap far outside the assumed noise starts the search at once (replicates come for free later:
every experiment that lands on a reference adds to its launches); anything closer is decided
on replicated launches, bad and good alternating, with the pooled t-test of agent.stats.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from agent.levels import noise, noise_is_measured, request
from agent.state import InvestigationState, PlannedLaunch
from agent.stats import MIN_RELATIVE_GAP, calibrate, level

MAX_REFERENCE_LAUNCHES = 5


def start(state: InvestigationState) -> None:
    """The first phase: hypothesize hands over to it with nothing to set up."""


def plan(state: InvestigationState, chooser: object = None) -> PlannedLaunch | None:
    bad, good = state.configs[state.bad_key], state.configs[state.good_key]
    if not good.values:
        return request(state, state.good_key, "calibrate: measure the good reference")
    if not bad.values:
        return request(state, state.bad_key, "calibrate: measure the bad reference")
    decision = decide(state)
    if decision != "unknown":
        return None
    key = state.bad_key if len(bad.values) <= len(good.values) else state.good_key
    return request(
        state,
        key,
        f"calibrate: the gap is not clear yet; another launch of {state.configs[key].label}",
    )


def advance(state: InvestigationState, log: Callable[..., None]) -> None:
    """The verdict: no regression (to the report), or a regression (to the search)."""
    verdict = decide(state)
    log("plan", "verdict", f"calibration: {verdict}: {state.notes[-1] if state.notes else ''}")
    if verdict == "no_regression":
        state.status = "no_regression"
        state.phase = "report"
    else:
        state.phase = "search"


def decide(state: InvestigationState) -> str:
    """ "regression", "no_regression" or "unknown" (and a note saying why)."""
    bad, good = state.configs[state.bad_key], state.configs[state.good_key]
    current = noise(state)
    if not noise_is_measured(state):
        log_gap = level(bad.values) - level(good.values)
        worse = 1 if state.worse == "higher" else -1
        if log_gap * worse >= max(math.log1p(MIN_RELATIVE_GAP), 4 * current.sigma):
            _note(
                state,
                f"gap {bad.mean - good.mean:+.3g} {state.symptom.unit} "
                f"({math.expm1(log_gap):+.1%}) is more than 4x the assumed launch noise "
                f"({current.sigma:.1%}): searching now, noise to be measured on the "
                "references' replicates",
            )
            return "regression"
        if min(len(bad.values), len(good.values)) < 2:
            return "unknown"
    result = calibrate(bad.values, good.values, current, state.worse, MAX_REFERENCE_LAUNCHES)
    if result.status != "unknown":
        _note(state, result.reason)
    return result.status


def _note(state: InvestigationState, text: str) -> None:
    if not state.notes or state.notes[-1] != text:
        state.notes.append(text)
