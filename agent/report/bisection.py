"""The bisection in the result and in report.md: git bisect's own words first (the first bad
commit, its author, date and PR), then every state of the range it tested."""

from __future__ import annotations

import contextlib
import math

import git

from agent.levels import noise
from agent.report.markdown_text import cell, fence
from agent.result import BisectionResult, InvestigationResult, TestedState
from agent.state import InvestigationState, RangeState
from agent.stats import ALPHA, level, p_equal
from tools.repo.commit_info import CommitInfo
from tools.repo.commit_of import commit_info


def bisection_result(state: InvestigationState, repo: git.Repo) -> BisectionResult | None:
    b = state.bisection
    if b is None or not b.done:
        return None
    outside = _outside(state)
    return BisectionResult(
        first_bad=first_bad_commit(state, repo),
        parent=b.parent_sha,
        could_be=[s.sha or "the uncommitted changes" for s in b.skipped_between()],
        tested=[
            TestedState(
                sha=s.sha,
                subject=s.subject,
                verdict=s.verdict,
                why=s.why,
                values=_values(state, s),
            )
            for s in _once(b.everything)
            if s.verdict
        ],
        range_share=_range_share(state),
        outside=[words for _, words in outside],
        # searched inside the commit only (a partial one sends the search over the range; not
        # a package's history inside its release: the next investigation is the target's)
        rest_after=b.first_bad.sha
        if b.narrowed and any(where == LATER for where, _ in outside) and not _inside_release(state)
        else None,
    )


def _inside_release(state: InvestigationState) -> bool:
    return state.releases is not None and state.releases.narrowed


def commits_repo(state: InvestigationState, repo: git.Repo) -> git.Repo:
    """The repository the bisection's commits are in: the target's, or inside a package's
    first slow release read from its project's history, our clone of that."""
    if _inside_release(state) and state.package_source is not None:
        with contextlib.suppress(git.InvalidGitRepositoryError, git.NoSuchPathError):
            return git.Repo(state.package_source[0])
    return repo


def first_bad_commit(state: InvestigationState, repo: git.Repo) -> CommitInfo | None:
    """The first bad commit as the report names it (None: the uncommitted changes, or none)."""
    b = state.bisection
    if b is None or not b.done or b.first_bad.sha is None:
        return None
    with contextlib.suppress(ValueError, git.GitCommandError):
        return commit_info(repo, b.first_bad.sha)
    return None


def _once(states: list[RangeState]) -> list[RangeState]:
    """Each state once (a merge stands in its first-parent line and, last, on its side's)."""
    seen: set[str | None] = set()
    once = []
    for s in states:  # the earliest stands for each sha (one state may be listed twice)
        if s.sha not in seen:
            seen.add(s.sha)
            once.append(s)
    return once


def _values(state: InvestigationState, s: RangeState) -> list[float]:
    config = state.configs.get(s.key)
    return list(config.values) if config is not None and config.values else list(s.values)


def _range_share(state: InvestigationState) -> float | None:
    """(level(first bad) - level(parent)) / (level(range's bad) - level(range's good))."""
    b = state.bisection
    assert b is not None
    line = b.mainline or b.states  # the first-parent line: its ends are the range's
    ends = [_values(state, s) for s in (line[0], line[-1], b.parent, b.first_bad)]
    if not all(ends):
        return None
    good, bad, parent, first = (level(v) for v in ends)
    return (first - parent) / (bad - good) if bad != good else None


def _outside(state: InvestigationState) -> list[tuple[str, str]]:
    """The range's bad end worse than the first bad commit, or its good end better than the
    commit's parent, significantly (1 %) and by at least [judge] min_share of the range's gap:
    part of the regression lies outside the commit. Each: (where, in words)."""
    b = state.bisection
    assert b is not None
    line = b.mainline or b.states
    sign = 1 if state.worse == "higher" else -1
    ends = [_values(state, s) for s in (line[0], line[-1])]
    gap = (level(ends[1]) - level(ends[0])) * sign if all(ends) else 0.0
    said = []
    pairs = (
        (line[-1], b.first_bad, "the range's bad end", LATER),
        (b.parent, line[0], "the first bad commit's parent", "earlier commits"),
    )
    for worse, better, name, where in pairs:
        a, c = _values(state, worse), _values(state, better)
        if not a or not c or worse.sha == better.sha or gap <= 0:
            continue
        p = p_equal(level(a), len(a), level(c), len(c), noise(state))
        share = (level(a) - level(c)) * sign / gap
        if p <= ALPHA and share >= state.min_share:
            said.append(
                (
                    where,
                    f"{name} measures {math.exp(level(a)):.3g} against "
                    f"{math.exp(level(c)):.3g} (p = {p:.2g}, {share:.0%} of the range's gap): "
                    f"part of the regression lies in {where}",
                )
            )
    return said


LATER = "later commits"


def bisection_lines(r: InvestigationResult) -> list[str]:
    """The section report.md opens with on a bisected range."""
    b = r.bisection
    if b is None:
        return []
    said: list[str] = []
    if b.could_be:
        said.append("There are only 'skip'ped commits left to test.")
        said.append("The first bad commit could be any of:")
        said += [*b.could_be, _sha(b)]
    else:
        said.append(f"{_sha(b)} is the first bad commit")
    if b.first_bad is not None:
        c = b.first_bad
        said += [
            f"commit {c.sha}",
            f"Author: {c.author}",
            f"Date:   {c.date}",
            "",
            f"    {c.subject}",
        ]
    lines = ["## First bad commit", "", *fence(said), ""]
    if b.first_bad is not None and b.first_bad.pr:
        lines += [f"Pull request: #{b.first_bad.pr}", ""]
    if b.range_share is not None:
        lines += [
            f"The step from its parent `{b.parent[:12]}` to it holds {b.range_share:.0%} of the "
            "whole range's gap (log scale).",
            "",
        ]
    lines += [f"- {line}" for line in b.outside] + ([""] if b.outside else [])
    lines += ["| state | subject | verdict | values | why |", "| --- | --- | --- | --- | --- |"]
    for t in b.tested:
        values = ", ".join(f"{v:.3g}" for v in t.values) or "-"
        name = "working tree" if t.sha is None else f"`{t.sha[:10]}`"
        lines.append(f"| {name} | {cell(t.subject)} | {t.verdict} | {values} | {cell(t.why)} |")
    return [*lines, ""]


def _sha(b: BisectionResult) -> str:
    return b.first_bad.sha if b.first_bad is not None else "the uncommitted changes"
