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


def steps(loaded: Loaded, only: str | None = None, at: int = 1) -> Iterator[Step]:
    kinds = ONLY.get(only or "")
    for event in loaded.events:
        if event.seq < at or (kinds and event.kind not in kinds):
            continue
        yield Step(
            seq=event.seq,
            node=event.node,
            kind=event.kind,
            text=event.text,
            detail=_detail(event),
        )


def header_lines(loaded: Loaded) -> list[str]:
    h = loaded.header
    target = h.target or HeaderTarget()
    lines = [
        f"session {h.session}: symptom {h.symptom.text if h.symptom else None!r}, "
        f"target {target.repo} (good {target.good}), reasoner {h.reasoner}"
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
