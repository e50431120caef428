"""Where the time moved between the two traced reference launches (the first of each)."""

from __future__ import annotations

from agent.state import InvestigationState
from tools.profile.movers import Mover, movers, time_unit

SHOWN = 8  # self-time movers kept in the facts, the largest rise first
KEPT_INCLUSIVE = 40  # inclusive ones: the functions on the way to them
NOTED = 0.02  # a self-time mover below this share of the gap is left out


def time_moved(state: InvestigationState) -> list[Mover]:
    """The movers of the bad reference against the good one, self time first, then inclusive;
    none without both profiles or both references' values."""
    facts = state.facts
    if facts is None or facts.trace is None or facts.good_trace is None:
        return []
    bad, good = facts.trace.profile, facts.good_trace.profile
    bad_values = state.configs[state.bad_key].values
    good_values = state.configs[state.good_key].values
    if bad is None or good is None or not bad_values or not good_values:
        return []
    worse = state.worse == "higher"
    own = movers(bad, good, bad_values[0], good_values[0], worse)
    on_the_way = movers(bad, good, bad_values[0], good_values[0], worse, "inclusive")
    own = [m for m in own if m.share is None or abs(m.share) >= NOTED]
    return own[:SHOWN] + on_the_way[:KEPT_INCLUSIVE]


def mover_line(m: Mover, unit: str, higher_is_worse: bool = True) -> str:
    """One mover in words: its function, its time per unit in both states, its share."""
    label, k = time_unit(unit, higher_is_worse)
    share = f", {m.share:.0%} of the gap" if m.share is not None else ""
    if m.delta < 0:
        return f"{m.function} {m.change}: {m.good * k:.3g} -> {m.bad * k:.3g} {label}{share}"
    return (
        f"{m.function} {m.change}: {m.good * k:.3g} -> {m.bad * k:.3g} {label} "
        f"(+{m.delta * k:.3g} [95 %: {m.low * k:.3g} to {m.high * k:.3g}]{share})"
    )
