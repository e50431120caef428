"""Where the time moved between the two traced reference launches (the first of each): in
the sampler's CPU time, and in the GPU time of SGLang's torch traces where the server wrote
them."""

from __future__ import annotations

from agent.state import InvestigationState
from tools.profile.movers import Mover, Source, movers, time_unit
from tools.profile.samples import Profile

SHOWN = 8  # self-time movers kept in the facts, the largest rise first
KEPT_INCLUSIVE = 40  # inclusive ones: the functions on the way to them
NOTED = 0.02  # a self-time mover below this share of the gap is left out


def time_moved(state: InvestigationState) -> list[Mover]:
    """The movers of the bad reference against the good one: self time first (GPU, then
    sampled, each the largest rise first), then inclusive; none without both profiles or both
    references' values."""
    facts = state.facts
    if facts is None or facts.trace is None or facts.good_trace is None:
        return []
    bad_values = state.configs[state.bad_key].values
    good_values = state.configs[state.good_key].values
    if not bad_values or not good_values:
        return []
    values = (bad_values[0], good_values[0], state.worse == "higher")
    # GPU time first where the server wrote torch traces: there it is the bench's own time,
    # while the CPU's shares, scaled to the bench, also count its waits for the GPU
    pairs: list[tuple[Profile | None, Profile | None, Source]] = [
        (facts.trace.kernels, facts.good_trace.kernels, "gpu"),
        (facts.trace.profile, facts.good_trace.profile, "sampled"),
    ]
    own: list[Mover] = []
    on_the_way: list[Mover] = []
    for bad, good, source in pairs:
        if bad is None or good is None:
            continue
        found = movers(bad, good, *values, "self", source)
        own += [m for m in found if m.share is None or abs(m.share) >= NOTED][:SHOWN]
        roots = set(bad.roots) | set(good.roots)  # on the way to all their thread does
        inclusive = movers(bad, good, *values, "inclusive", source)
        on_the_way += [m for m in inclusive if m.function not in roots][:KEPT_INCLUSIVE]
    return own + on_the_way


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
