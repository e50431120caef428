"""A culprit package's releases in the result and the report: the first slow release, the one
before it, and each release tested with its verdict."""

from __future__ import annotations

from agent.release_verdict import result_lines
from agent.result import InvestigationResult, ReleasesResult, TestedState
from agent.state import InvestigationState


def releases_result(state: InvestigationState) -> ReleasesResult | None:
    b = state.releases
    if b is None or not b.done:
        return None
    return ReleasesResult(
        package=b.package,
        good=b.states[0].sha or "",
        bad=b.states[-1].sha or "",
        first_slow=b.states[b.high].sha or "",
        before=b.states[b.low].sha or "",
        could_be=[s.sha or "" for s in b.states[b.low + 1 : b.high] if s.verdict == "skipped"],
        tested=[
            TestedState(sha=s.sha, subject=s.subject, verdict=s.verdict, why=s.why, values=s.values)
            for s in b.states[1:-1]
            if s.verdict
        ],
        lines=result_lines(b),
    )


def releases_lines(r: InvestigationResult) -> list[str]:
    """The section report.md gives a culprit package's releases."""
    rel = r.releases
    if rel is None:
        return []
    lines = [f"## First slow release of {rel.package} ({rel.good} -> {rel.bad})", ""]
    lines += [f"- {line}" for line in rel.lines]
    lines += [f"- tested {t.subject}: {t.verdict}, {t.why}" for t in rel.tested]
    return [*lines, ""]
