"""Where the time moved between the two traced reference launches (the first of each): in
the sampler's CPU time, and in the GPU time of SGLang's torch traces where the server wrote
them."""

from __future__ import annotations

from dataclasses import dataclass

from agent.state import InvestigationState
from tools.profile.movers import Mover, Source, movers, time_unit
from tools.profile.samples import Profile

SHOWN = 8  # self-time movers kept in the facts, the largest rise first
KEPT_INCLUSIVE = 40  # inclusive ones: the functions on the way to them
NOTED = 0.02  # a self-time mover below this share of the gap is left out


# the profiles a traced launch carries, GPU time first (there it is the bench's own time, while
# the CPU's shares, scaled to the bench, also count its waits for the GPU): key, title, the
# ImportTrace attribute, the movers' source
KINDS: tuple[tuple[str, str, str, Source], ...] = (
    ("gpu", "GPU time (torch traces)", "kernels", "gpu"),
    ("cpu", "CPU time (sampled)", "profile", "sampled"),
)


@dataclass(frozen=True)
class Pair:
    key: str
    title: str
    source: Source
    bad: Profile
    good: Profile


def profile_pairs(state: InvestigationState) -> tuple[list[Pair], float, float]:
    """The traced references' profiles, kind by kind where both have one, with each traced
    launch's value (none without both traces and both values)."""
    facts = state.facts
    bad_values = state.configs[state.bad_key].values if state.bad_key in state.configs else []
    good_values = state.configs[state.good_key].values if state.good_key in state.configs else []
    if facts is None or facts.trace is None or facts.good_trace is None:
        return [], 0.0, 0.0
    if not bad_values or not good_values:
        return [], 0.0, 0.0
    pairs = [
        Pair(key, title, source, bad, good)
        for key, title, attribute, source in KINDS
        if (bad := getattr(facts.trace, attribute)) is not None
        and (good := getattr(facts.good_trace, attribute)) is not None
    ]
    return pairs, bad_values[0], good_values[0]


def time_moved(state: InvestigationState) -> list[Mover]:
    """The movers of the bad reference against the good one: self time first (GPU, then
    sampled, each the largest rise first), then inclusive; none without both profiles or both
    references' values."""
    pairs, bad_value, good_value = profile_pairs(state)
    values = (bad_value, good_value, state.worse == "higher")
    own: list[Mover] = []
    on_the_way: list[Mover] = []
    for pair in pairs:
        bad, good, source = pair.bad, pair.good, pair.source
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
