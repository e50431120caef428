"""The "Where the time moved" table of the reports: the profiles' self-time movers."""

from __future__ import annotations

from agent.result import InvestigationResult
from tools.profile.movers import time_unit

INTRO = (
    "Self time per unit of the bench in the traced references' profiles: the sampler's CPU "
    "time in every Python process (95 % interval from the sampling), and the GPU time of "
    "SGLang's torch traces where the server wrote them (a kernel, and the function that "
    "launched it)"
)


def time_moved_rows(r: InvestigationResult) -> tuple[list[str], list[list[str]]]:
    """The table's header and rows (none: no profiles, or nothing moved)."""
    unit, k = time_unit(r.metric.unit, r.symptom.direction == "lower")
    header = ["function", "time", f"good ({unit})", f"bad ({unit})", "change", "share of the gap"]
    rows = [
        [
            m.function,
            "GPU" if m.source == "gpu" else "CPU",
            f"{m.good * k:.3g}",
            f"{m.bad * k:.3g}",
            f"{m.change} {m.delta * k:+.3g} [{m.low * k:+.3g}, {m.high * k:+.3g}]",
            "" if m.share is None else f"{m.share:.0%}",
        ]
        for m in r.time_moved
    ]
    return header, rows


def time_moved_lines(r: InvestigationResult) -> list[str]:
    """The movers between the traced references as a markdown table (none: no section)."""
    if not r.time_moved:
        return []
    header, rows = time_moved_rows(r)
    lines = ["## Where the time moved", "", INTRO + ":", ""]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += [f"| `{row[0]}` | " + " | ".join(row[1:]) + " |" for row in rows]
    return [*lines, ""]
