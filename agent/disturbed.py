"""Disturbed launches: a launch that disagrees with its own configuration's other launches far
beyond the measured noise is set aside (kept in the transcript and the report, not counted).

A whole launch can be slowed by the machine (another job, a throttled VM, CPU steal): all its
requests pay, so the best-of or median over requests does not help, and in a pooled t-test one
such launch widens every comparison of the investigation. The test is a prediction check on a
relative (log) scale: the launch against the mean of the configuration's other launches (at least
two), with the noise pooled from every other replicate, at a Bonferroni-corrected level over all
launches that could be tested. Only a launch worse than the others is tested: a machine slows a
process, it never makes one faster than its code, so where two of three launches were slowed the
fast one is the true reading (setting it aside would let the slowed majority win). Under
Gaussian launch noise it sets a launch aside about once in two thousand investigations; the
configuration gets another launch in its place.
"""

from __future__ import annotations

import math
import statistics

from agent.state import InvestigationState, Launch, Variant
from agent.stats import level, pooled_noise, t_sf

FAMILY_ALPHA = 1e-3  # chance, per investigation, of setting aside one launch that was fine
TRACED_ALPHA = 0.01  # a traced launch (instrumented) is held to a plain test, not the family's
MIN_OTHERS = 2  # launches of the same configuration the suspect is held against
MIN_DF = 3  # degrees of freedom of the pooled noise before anything is set aside


def _counted(config: Variant) -> list[Launch]:
    return [launch for launch in config.launches if launch.disturbed is None]


def _p_apart(value: float, others: list[float], sigma: float, df: int) -> float:
    """Two-sided p of a launch against the mean of `others` (log scale, pooled noise)."""
    distance = abs(level([value]) - level(others))
    return 2 * t_sf(distance / (sigma * math.sqrt(1 + 1 / len(others))), df)


def disagreement(state: InvestigationState, config: Variant, launch: Launch) -> float | None:
    """How far `launch` sits from its configuration's other counted launches: the p of the
    test below, with the noise pooled from every other replicate; None when not testable."""
    others = [other.value for other in _counted(config) if other is not launch]
    rest = [
        [other.value for other in _counted(c)] for c in state.configs.values() if c is not config
    ]
    noise = pooled_noise([others, *rest])
    if not others or noise.df < MIN_DF:
        return None
    return _p_apart(launch.value, others, noise.sigma, noise.df)


def _worse(state: InvestigationState, value: float, others: list[float]) -> bool:
    """Whether `value` reads worse than the mean of `others` (log scale)."""
    return (level([value]) > level(others)) == (state.worse == "higher")


def _worst(state: InvestigationState) -> tuple[Variant, Launch, float, float, int] | None:
    """The launch most at odds with its configuration: (config, launch, p, sigma, df)."""
    counted = {
        key: [launch.value for launch in _counted(config)] for key, config in state.configs.items()
    }
    testable = [
        (key, i)
        for key, values in counted.items()
        if len(values) > MIN_OTHERS
        for i in range(len(values))
    ]
    worst = None
    for key, i in testable:
        others = counted[key][:i] + counted[key][i + 1 :]
        noise = pooled_noise([others] + [values for k, values in counted.items() if k != key])
        if noise.df < MIN_DF:
            continue
        if not _worse(state, counted[key][i], others):
            continue
        p = _p_apart(counted[key][i], others, noise.sigma, noise.df)
        if worst is None or p < worst[2]:
            worst = (state.configs[key], _counted(state.configs[key])[i], p, noise.sigma, noise.df)
    if worst is None or worst[2] > FAMILY_ALPHA / len(testable):
        return None
    return worst


def _traced_apart(state: InvestigationState) -> tuple[Variant, Launch, float, float, int] | None:
    """A reference's traced first launch that its untraced replicates (two or more) contradict
    at TRACED_ALPHA: the import trace may cost time, so it counts only while it agrees."""
    for config in state.configs.values():
        counted = _counted(config)
        traced = [launch for launch in counted if launch.traced]
        plain = [launch.value for launch in counted if not launch.traced]
        if not traced or len(plain) < MIN_OTHERS:
            continue
        rest = [[x.value for x in _counted(c)] for c in state.configs.values() if c is not config]
        noise = pooled_noise([plain, *rest])
        if noise.df < MIN_DF:
            continue
        p = _p_apart(traced[0].value, plain, noise.sigma, noise.df)
        if p <= TRACED_ALPHA:
            return config, traced[0], p, noise.sigma, noise.df
    return None


def set_aside_disturbed(state: InvestigationState) -> list[str]:
    """Mark every disturbed launch (a traced one that disagrees first, then the most extreme,
    the noise re-estimated each time); returns one line of evidence for each."""
    lines = []
    while (found := _traced_apart(state) or _worst(state)) is not None:
        config, launch, p, sigma, df = found
        others = [other.value for other in _counted(config) if other is not launch]
        ratio = launch.value / statistics.fmean(others)
        direction = "slower" if (ratio > 1) == (state.worse == "higher") else "faster"
        launch.disturbed = ("traced (import trace on): " if launch.traced else "") + (
            f"{launch.value:.3g} is {ratio:.2f}x the mean of the configuration's other "
            f"{len(others)} launches ({', '.join(f'{v:.3g}' for v in others)}), {direction}; "
            f"launch noise {sigma:.1%} from {df} df, p = {p:.1g}"
        )
        lines.append(
            f"set aside a disturbed launch of {config.label} (request {launch.request}): "
            f"{launch.disturbed}; it gets another launch"
        )
    return lines
