"""The "Where the time moved" section of report.md: the profiles' self-time movers."""

from __future__ import annotations

from agent.result import InvestigationResult
from tools.profile.movers import time_unit


def time_moved_lines(r: InvestigationResult) -> list[str]:
    """The movers between the traced references as a table (none: no section)."""
    if not r.time_moved:
        return []
    unit, k = time_unit(r.metric.unit, r.symptom.direction == "lower")
    lines = [
        "## Where the time moved",
        "",
        "Self time per unit of the bench in the traced references' profiles: the sampler's "
        "CPU time in every Python process (95 % interval from the sampling), and the GPU time "
        "of SGLang's torch traces where the server wrote them (a kernel, and the function "
        "that launched it):",
        "",
        f"| function | time | good ({unit}) | bad ({unit}) | change | share of the gap |",
        "|---|---|---|---|---|---|",
    ]
    for m in r.time_moved:
        share = "" if m.share is None else f"{m.share:.0%}"
        time = "GPU" if m.source == "gpu" else "CPU"
        lines.append(
            f"| `{m.function}` | {time} | {m.good * k:.3g} | {m.bad * k:.3g} | {m.change} "
            f"{m.delta * k:+.3g} [{m.low * k:+.3g}, {m.high * k:+.3g}] | {share} |"
        )
    return [*lines, ""]
