"""A release search's verdict in words: the first slow release and the one before it (the
transcript, the notes and report.md say it alike)."""

from __future__ import annotations

from agent.state import Bisection


def result_lines(b: Bisection) -> list[str]:
    slow, before = b.states[b.high], b.states[b.low]
    skipped = [s for s in b.states[b.low + 1 : b.high] if s.verdict == "skipped"]
    if skipped:
        could = ", ".join(s.subject for s in [*skipped, slow])
        first = f"the first slow release could be any of {could} (the others do not run)"
    else:
        first = f"{slow.subject} is the first slow release"
    measured = "measured" if b.low > 0 else "the good version, measured"
    return [first, f"{before.subject} before it is fast ({measured}); {slow.why or 'the bad end'}"]
