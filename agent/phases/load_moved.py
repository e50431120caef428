"""A share part of the way between the ends, held against the nearer end as the machine runs now.

The references are measured first; what is compared with them comes later, and the machine's
load may have moved in between. On a loaded 2-core CI run the vLLM lab's references read
2.55/3.49 ms under a neighbour's load, the good state with the culprit applied then read about
3.0 once the load had gone: "part of the way", and the culprit only suspected. So a state that
reads part of the way is believed only once its nearer end, launched after it, still sits
significantly apart from it; at that end's level as it runs now, it is at that end.
"""

from __future__ import annotations

from agent.levels import between, noise, request
from agent.state import InvestigationState, PlannedLaunch, Variant
from agent.stats import ALPHA, level, p_equal


def launched_since(state: InvestigationState, config: Variant, key: str) -> list[float]:
    """The counted values of `key` launched after `config`'s first launch: `key` as the
    machine ran beside `config`."""
    first = min(launch.request for launch in config.launches)
    return [
        launch.value
        for launch in state.configs[key].launches
        if launch.request > first and launch.disturbed is None
    ]


def p_level_now(state: InvestigationState, config: Variant, key: str) -> float | None:
    """The p of `config` at the level of `key` launched since; None when none was."""
    now = launched_since(state, config, key)
    if not now or not config.values:
        return None
    return p_equal(level(config.values), len(config.values), level(now), len(now), noise(state))


def _ends(state: InvestigationState, key: str, apply_side: bool) -> tuple[str, str]:
    """(the end `key` is to reach, the end it starts from): applied to good, it reproduces
    the regression (bad); reverted from bad, it restores the good value."""
    return (state.bad_key, state.good_key) if apply_side else (state.good_key, state.bad_key)


def _nearer(state: InvestigationState, key: str, apply_side: bool) -> tuple[str, bool, float]:
    """The end `key` sits nearer to, whether that is the end it is to reach, and its share."""
    target, start = _ends(state, key, apply_side)
    r = between(state, key, start, target).r
    return (target, True, r) if r >= 0.5 else (start, False, r)


def moved_verdict(state: InvestigationState, key: str, apply_side: bool) -> str | None:
    """For a state that reads part of the way: "restored" or "none" where it sits at its
    nearer end's level as it runs now (the load moved, not the code); None otherwise."""
    near, is_target, _ = _nearer(state, key, apply_side)
    p = p_level_now(state, state.configs[key], near)
    if p is None or p <= ALPHA:
        return None
    return "restored" if is_target else "none"


def moved_line(state: InvestigationState, key: str, apply_side: bool) -> str:
    """The transcript's words for a verdict moved_verdict gave."""
    near, _, r = _nearer(state, key, apply_side)
    config, end = state.configs[key], state.configs[near]
    now = launched_since(state, config, near)
    return (
        f"{config.label} reads {r:.0%} of the way between the references, but {end.label} "
        f"measures {sum(now) / len(now):.3g} now, and it sits at that level "
        f"(p = {p_level_now(state, config, near):.2g}): the load moved, not the code"
    )


def recheck_launch(
    state: InvestigationState, key: str, apply_side: bool, asked: list[str]
) -> PlannedLaunch | None:
    """The nearer end again, once per state that reads part of the way (`asked` keeps the
    keys asked for), when it has not been launched since that state was."""
    if key in asked:
        return None
    near, _, r = _nearer(state, key, apply_side)
    if launched_since(state, state.configs[key], near):
        return None
    asked.append(key)
    label = state.configs[key].label
    return request(
        state,
        near,
        f"confirm: {label} reads {r:.0%} of the way; {state.configs[near].label} again, as the "
        "machine runs now",
    )
