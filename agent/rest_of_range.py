"""The rest of a range: later commits that hold more of the gap than the first bad commit.

Two causes in one range add up: the first bad commit explains its step, and the range's bad
end measures worse than that commit, significantly and by at least [judge] min_share of the
gap. `investigate` then searches again from the first bad commit as the new good end, as a
user runs `git bisect` again from there; each search is a session of its own (replayable on
its own), on what is left of the launch budget. The first session's result and report.md
name the searches that followed it.
"""

from __future__ import annotations

import json
from pathlib import Path

from agent.result import InvestigationResult, RestSearch
from tools.own_files import append_text, replace_text

MAX_SEARCHES = 4  # the first search and at most three more: a range of many causes says so
MIN_LAUNCHES = 6  # a search needs its two ends, a probe or two and a two-way confirmation


def rest_after(result: dict) -> str | None:
    """The first bad commit to search on from, when its confirmed search says later commits
    hold part of the gap."""
    if result.get("status") != "confirmed":
        return None
    return (result.get("bisection") or {}).get("rest_after")


def joined(results: list[dict]) -> dict:
    """The first search's result, naming the later ones (and saved so in its session)."""
    first, later = results[0], results[1:]
    if not later:
        return first
    rest = [
        RestSearch(
            session=r["session"],
            good=(results[i].get("bisection") or {}).get("rest_after") or "",
            status=r["status"],
            first_bad=((r.get("bisection") or {}).get("first_bad") or {}).get("sha"),
            culprits=[c["id"] for c in r["culprits"]],
            launches=r["launches"],
        )
        for i, r in enumerate(later)
    ]
    merged = InvestigationResult.model_validate({**first, "rest": rest}).model_dump()
    folder = Path(first["session_dir"])
    replace_text(folder / "result.json", json.dumps(merged, indent=2, default=str))
    append_text(folder / "report.md", "\n".join(rest_lines(rest)) + "\n")
    return merged


def rest_lines(rest: list[RestSearch]) -> list[str]:
    """report.md's section on the searches after the first."""
    lines = ["", "## The rest of the range", ""]
    for r in rest:
        found = f"`{r.first_bad[:12]}` is the next bad commit" if r.first_bad else "no commit"
        named = ", ".join(r.culprits) or "nothing named"
        lines.append(
            f"- from `{r.good[:12]}`: session {r.session}, **{r.status}** in {r.launches} "
            f"launches: {found}; culprits: {named}"
        )
    return lines
