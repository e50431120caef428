"""The standard error of a function's share of a profile by the method of batch means.

A sampler's looks are not independent: a thread inside a slow call is seen there look after
look, so the binomial error of n samples is too small, and a function seen in a burst of one
launch looks like a mover. The sampler counts its stacks in contiguous batches of time
(tools/proc/hooks/debug_agent_profile.py); the spread of a function's seconds against the
batches' totals (the ratio estimator's error) knows how alike consecutive looks were.
"""

from __future__ import annotations

import math

MIN_BATCHES = 4  # fewer: no batch error (the binomial one stands alone)


def share_errors(
    per_batch: dict[str, dict[int, float]], totals: dict[int, float]
) -> dict[str, float]:
    """function -> the standard error of its share (seconds / all seconds) across `totals`'
    batches (those with any time); none where there are too few batches."""
    batches = [j for j, total in totals.items() if total > 0]
    b = len(batches)
    if b < MIN_BATCHES:
        return {}
    all_seconds = sum(totals[j] for j in batches)
    mean_total = all_seconds / b
    errors = {}
    for function, seconds in per_batch.items():
        share = sum(seconds.values()) / all_seconds
        square = sum((seconds.get(j, 0.0) - share * totals[j]) ** 2 for j in batches)
        errors[function] = math.sqrt(square / (b * (b - 1))) / mean_total
    return errors
