"""`debug-agent replay`: a saved session, step by step, from its transcript (never re-executed)."""

from __future__ import annotations

import sys
from collections.abc import Iterator

from pydantic import BaseModel

from agent.events import (
    Event,
    EventKind,
    ExperimentPayload,
    HeaderTarget,
    ToolCallPayload,
    VerdictPayload,
)
from agent.transcript import Loaded
from tools.visible import visible

SHOWN = 4000  # characters of one step's text on the screen; the transcript keeps them all

ONLY = {
    "hypotheses": {"hypothesis"},
    "experiments": {"experiment", "tool_call", "tool_result"},
    "verdicts": {"verdict"},
}


class Step(BaseModel):
    seq: int
    node: str
    kind: EventKind
    text: str
    detail: str  # a compact view of the payload


def _detail(event: Event) -> str:
    p = event.payload
    if isinstance(p, ExperimentPayload) and p.samples is not None:
        shown = ", ".join(f"{v:.3g}" for v in p.samples[:8])
        return f"samples [{shown}{', ...' if len(p.samples) > 8 else ''}]  log {p.log}"
    if isinstance(p, VerdictPayload) and p.r is not None:
        return f"r={p.r:.2f} verdict={p.verdict} launches={p.launches}"
    if isinstance(p, ToolCallPayload) and p.candidates is not None:
        return ", ".join(c.id for c in p.candidates)
    return ""


def _shown(text: str) -> str:
    """A transcript's text as the screen shows it: control characters written out, never
    obeyed (a transcript is a file anyone may have edited: `\x1b]0;` retitled the terminal),
    and cut to SHOWN characters (a 50 kB line filled the screen)."""
    cut = f" ... ({len(text) - SHOWN:,} more characters)" if len(text) > SHOWN else ""
    return visible(text[:SHOWN]) + cut


def steps(loaded: Loaded, only: str | None = None, at: int = 1) -> Iterator[Step]:
    kinds = ONLY.get(only or "")
    for event in loaded.events:
        if event.seq < at or (kinds and event.kind not in kinds):
            continue
        yield Step(
            seq=event.seq,
            node=event.node,
            kind=event.kind,
            text=_shown(event.text),
            detail=_shown(_detail(event)),
        )


def header_lines(loaded: Loaded) -> list[str]:
    h = loaded.header
    target = h.target or HeaderTarget()
    lines = [
        _shown(
            f"session {h.session}: symptom {h.symptom.text if h.symptom else None!r}, "
            f"target {target.repo} (good {target.good}), reasoner {h.reasoner}"
        )
    ]
    if loaded.torn:
        lines.append("note: the last line was cut (the writer was killed mid-line); skipped")
    return lines


def plain(loaded: Loaded, only: str | None, at: int) -> None:
    out = sys.stdout
    for line in header_lines(loaded):
        out.write(line + "\n")
    for step in steps(loaded, only, at):
        out.write(f"[{step.seq:>4}] {step.node:<11} {step.kind:<11} {step.text}\n")
        if step.detail:
            out.write(f"{'':>30}{step.detail}\n")
