"""`debug-agent replay`: a saved session, step by step, from its transcript (never re-executed)."""

from __future__ import annotations

import sys
from collections.abc import Iterator

from pydantic import BaseModel

from agent.transcript import Loaded

ONLY = {
    "hypotheses": {"hypothesis"},
    "experiments": {"experiment", "tool_call", "tool_result"},
    "verdicts": {"verdict"},
}


class Step(BaseModel):
    seq: int
    node: str
    kind: str
    text: str
    detail: str  # a compact view of the payload


def _detail(event: dict) -> str:
    payload = event.get("payload") or {}
    if event.get("kind") == "experiment" and "samples" in payload:
        samples = payload["samples"]
        shown = ", ".join(f"{v:.3g}" for v in samples[:8])
        return f"samples [{shown}{', ...' if len(samples) > 8 else ''}]  log {payload.get('log')}"
    if event.get("kind") == "verdict" and "r" in payload:
        return (
            f"r={payload['r']:.2f} verdict={payload.get('verdict')} launches="
            f"{payload.get('launches')}"
        )
    if "candidates" in payload:
        return ", ".join(c.get("id", "?") for c in payload["candidates"])
    return ""


def steps(loaded: Loaded, only: str | None = None, at: int = 1) -> Iterator[Step]:
    kinds = ONLY.get(only or "")
    for event in loaded.events:
        if int(event.get("seq", 0)) < at or (kinds and event.get("kind") not in kinds):
            continue
        yield Step(
            seq=int(event.get("seq", 0)),
            node=str(event.get("node", "?")),
            kind=str(event.get("kind", "?")),
            text=str(event.get("text", "")),
            detail=_detail(event),
        )


def header_lines(loaded: Loaded) -> list[str]:
    h = loaded.header
    target = h.get("target") or {}
    lines = [
        f"session {h.get('session')}: symptom {(h.get('symptom') or {}).get('text')!r}, "
        f"target {target.get('repo')} (good {target.get('good')}), reasoner "
        f"{h.get('reasoner', '?')}"
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
