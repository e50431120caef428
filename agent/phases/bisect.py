"""Bisect: the commits first, on real trees, as `git bisect run` does, but noise-aware.

Where good..HEAD holds first-parent commits, each probe is the tree of one commit as its
authors left it (a scratch worktree at that commit, launched as the bad side is), never a
subset of hunks: a tree that existed builds and runs, and a commit that made lines slow is
tested on its own even when its file was added earlier in the range. The working tree's
uncommitted changes are one last "commit" on top.

A probe is judged against the two references measured in calibration: at the good level (the
first bad commit is later), at the bad level or part of the way (it is this one or earlier), or
unclear, when it is launched again (a probe is replicated only while its result is in doubt).
One that does not build, start or bench, or stays unclear after MAX_LAUNCHES_PER_CONFIG, is
skipped, as `exit 125` is, and a neighbour tested instead. Probes halve the prior mass, not the
count: a commit weighs the priors of the suspected hunks the range's diff places at it, plus a
share of its files' weight; one that touches only files no traced launch imported or opened
weighs little, so it is tested last, never dropped. A merge found first bad is bisected into:
its second parent's line from the merge base, the merge itself last. The result is the first
bad commit with its parent good (measured, or an ancestor of a commit measured good) and
itself bad on a second launch too (one slowed process reads a good tree bad); the search then
goes on inside that commit alone (agent/narrow.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import git

from agent.levels import MAX_LAUNCHES_PER_CONFIG, replicate, request
from agent.phases.hot_commit import hot_commit, hot_pair, hot_tie
from agent.phases.pattern_focus import pattern_focus
from agent.phases.probe_choice import next_probe
from agent.phases.probe_verdict import PART_WAY, RECHECK, judge, name
from agent.profile.regex_time import regex_time
from agent.state import Bisection, InvestigationState, PlannedLaunch, RangeState, Variant
from tools.repo.commit_groups import RangeCommit
from tools.repo.merge_sides import SideCommit

LIGHT = 0.2  # the weight of a commit touching only files the traced launches never used
COMMIT_KEY = "commit-"
# a commit's weight: its suspected hunks' priors, plus this share of its files' (a commit that
# only edits a file added earlier in the range has no hunk of its own in the range's diff)
FILE_SHARE = 0.25
# a hunk the profile ties to FOCUS of the gap or more puts that share of the prior mass on its
# commit (at most FOCUS_CAP), so that commit and its parent are probed first, as Pinpoint does:
# right, the first bad commit in two probes; wrong, a probe or two more
FOCUS_CAP = 0.9


def bisection_of(
    state: InvestigationState,
    why_not: list[str],
    remote: bool = False,
    repo: git.Repo | None = None,
) -> Bisection | None:
    """The range's states, each with its config (made here for the commits in between), or
    None (and why not, in `why_not`) when there is nothing to bisect."""
    groups = state.commits
    if not groups.commits:
        return None
    if remote:
        why_not.append(
            "the repository is on a node ([host]), read here through a mirror of its good "
            "commit: the commits are searched as hunks"
        )
        return None
    if not groups.from_good:
        why_not.append("good is not an ancestor of HEAD: the commits are searched as hunks")
        return None
    if any(c.kind != "hunk" for c in state.candidates):
        why_not.append(
            "env or server-arg changes differ between the ends: the commits are searched as "
            "hunks beside them"
        )
        return None
    weights = _file_weights(state)
    floor = min(weights.values())
    states = [RangeState(sha=state.good_sha, subject="(good)", key=state.good_key, verdict="good")]
    placed = _placed_priors(state)
    for index, commit in enumerate(groups.commits):
        states.append(_range_state(commit, weights, floor))
        # the hunks the range's diff places at this commit make it likelier still; a commit
        # that only edits a file added earlier keeps its file's weight (its hunk sits there)
        states[-1].weight = FILE_SHARE * states[-1].weight + placed.get(index, 0.0)
        states[-1].merge_base = commit.merge_base
        states[-1].side = [
            _range_state(side, weights, floor).model_copy(update={"parent": side.parent})
            for side in commit.side
        ]
    if groups.uncommitted in groups.of.values():
        weight = placed.get(groups.uncommitted, 0.0) + FILE_SHARE * weights[""]
        states.append(RangeState(sha=None, subject="the uncommitted changes", weight=weight))
    hot = hot_commit(state, repo)
    _focus(state, states, hot)
    states[-1].key, states[-1].verdict = state.bad_key, "bad"
    if len(states) < 3:  # one step from good to bad: nothing to probe
        return None
    for probe in states[1:-1]:
        _commit_config(state, probe)
    b = Bisection(states=states, high=len(states) - 1, range_good_sha=state.good_sha)
    b.patterns = _pattern_focus(state, states, repo, lambda path: _used(path, weights, floor))
    if hot is not None and repo is not None and all(s.sha != hot for s in states):
        b.hot = hot_pair(repo, hot, states[:1])  # off the first-parent line: it and its parent
        for here in b.hot:
            if not here.key:
                _commit_config(state, here)
    return b


def _focus(state: InvestigationState, states: list[RangeState], hot: str | None) -> None:
    """The commit that wrote the hot hunk's lines (`hot`, when it is on this line), else the
    one the range's diff places that hunk at, gets the hunk's share of the commits' prior mass
    (the profile ties it to FOCUS of the gap or more)."""
    tie = hot_tie(state)
    if tie is None:
        return
    share, cid = tie
    at = next((i for i, s in enumerate(states) if hot is not None and s.sha == hot), None)
    if at is None:
        placed = state.commits.of.get(cid)
        if placed is None or placed >= len(state.commits.commits):
            return
        at = placed + 1  # states[0] is the good end
    share = min(share, FOCUS_CAP)
    focus = states[at]
    others = sum(s.weight for s in states[1:] if s is not focus)
    if others:  # never less than it held already
        focus.weight = max(focus.weight, share / (1 - share) * others)


def _pattern_focus(
    state: InvestigationState,
    states: list[RangeState],
    repo: git.Repo | None,
    used: Callable[[str], bool],
) -> str:
    """The commits changing a regex weigh more when the time moved into regex matching."""
    if repo is None or state.facts is None or not state.facts.movers:
        return ""
    regex = regex_time(state.facts.movers, Path(repo.working_tree_dir or "."))
    return pattern_focus(states, state.commits.commits, regex, used) if regex else ""


def _used(path: str, weights: dict[str, float], floor: float) -> bool:
    """Whether a traced launch used `path` (a file no candidate names counts as used)."""
    return weights.get(path, math.inf) > floor


def _range_state(
    commit: RangeCommit | SideCommit, weights: dict[str, float], floor: float
) -> RangeState:
    files = commit.files
    return RangeState(
        sha=commit.sha,
        subject=commit.subject,
        author=commit.author,
        date=commit.date,
        weight=max((weights.get(f, weights[""]) for f in files), default=weights[""]),
        unused=bool(files) and not any(_used(f, weights, floor) for f in files),
    )


def _commit_config(state: InvestigationState, probe: RangeState) -> None:
    """The config launching the commit's tree as it is (made once)."""
    assert probe.sha is not None
    probe.key = COMMIT_KEY + probe.sha[:12]
    label = f"commit {probe.sha[:8]}"
    state.configs.setdefault(
        probe.key, Variant(key=probe.key, label=label, base="bad", ids=[], commit=probe.sha)
    )


def _placed_priors(state: InvestigationState) -> dict[int, float]:
    """The priors of the suspected hunks, summed by the commit the range's diff places them at."""
    placed: dict[int, float] = {}
    for cid, at in state.commits.of.items():
        h = state.hypotheses.get(cid)
        if h is not None and h.status != "dropped":
            placed[at] = placed.get(at, 0.0) + h.prior
    return placed


def _file_weights(state: InvestigationState) -> dict[str, float]:
    """Each changed file's weight: the highest prior of its hunks still suspected, or LIGHT of
    the lowest prior when all of them were dropped on evidence. A file no candidate names (one
    changed and changed back inside the range) is not here: it weighs the median prior."""
    priors: dict[str, list[float]] = {}
    for c in state.candidates:
        h = state.hypotheses.get(c.id)
        if c.file is not None and h is not None:
            priors.setdefault(c.file, []).append(h.prior if h.status != "dropped" else 0.0)
    kept = sorted(p for ps in priors.values() for p in ps if p > 0) or [1.0]
    floor = LIGHT * kept[0]
    return {f: max(max(ps), floor) for f, ps in priors.items()} | {"": kept[len(kept) // 2]}


def start(state: InvestigationState) -> None:
    """The bisection was laid out with the hypotheses (it needs the repository)."""


def plan(state: InvestigationState, chooser: object = None) -> PlannedLaunch | None:
    b = state.bisection
    if b is None or b.done or b.narrowed:
        return None
    if b.hot and (more := _hot_first(state, b)) is not None:
        return more
    if b.done:
        return None
    while True:
        while (probe := next_probe(b)) is not None:
            if (more := _test(state, b.states[probe])) is not None:
                return more
            if b.states[probe].verdict == "good":
                b.low = probe
            elif b.states[probe].verdict == "bad":
                b.high = probe
        here = b.states[b.high]
        # a merge first bad is bisected into first: its side line's first bad commit is looked
        # at again, or, where that line ends at the merge itself, the merge
        if not (here.side and not b.merge) and (more := _second_look(state, here)):
            return more
        if here.verdict != "bad":  # a slowed process made it bad: on above it
            _go_above(b)
            continue
        merge = b.states[b.high]
        if not merge.side or b.merge:  # not a merge, or its side was looked into
            break
        # the merge is the first bad commit: its second parent's line from the merge base,
        # the merge itself last (bad; against its first parent, should the side all be good)
        b.merge = merge.sha or ""
        base = RangeState(
            sha=merge.merge_base,
            subject="(the merge base)",
            verdict="good",
            why="an ancestor of the good first parent",
        )
        for here in (base, *merge.side):
            _commit_config(state, here)
        # the merge's own change (a conflict resolved) is rarely the cause: it weighs least
        light = LIGHT * min((s.weight for s in merge.side), default=merge.weight)
        first_parent = b.states[b.high - 1].sha or ""
        itself = merge.model_copy(update={"side": [], "parent": first_parent, "weight": light})
        _enter(b, [base, *merge.side, itself])
    b.done = True
    return None


def _go_above(b: Bisection) -> None:
    """The first bad commit turned out not bad: the bisection goes on above it; where it was
    the merge itself, at the end of its side line, on the first-parent line above the merge."""
    here = b.states[b.high]
    b.low = b.high if here.verdict == "good" else b.low
    above = [i for i in range(b.high + 1, len(b.states)) if b.states[i].verdict == "bad"]
    if above:
        b.high = above[0]
        return
    line = b.mainline
    at = next(i for i, s in enumerate(line) if s.sha == here.sha)
    line[at] = line[at].model_copy(
        update={"verdict": here.verdict, "why": here.why, "values": here.values}
    )
    b.tried, b.states, b.mainline, b.merge = [*b.tried, *b.states], line, [], ""
    b.low = at if here.verdict == "good" else b.low
    b.high = next(i for i in range(at + 1, len(line)) if line[i].verdict == "bad")


def _second_look(state: InvestigationState, here: RangeState) -> PlannedLaunch | None:
    """The first bad commit launched a second time before anything rests on it, then judged
    again on both launches (its verdict may turn). One launch of a good tree in a slowed
    process reads at the bad level wherever the slowdown is as large as the regression
    (werkzeug's 1.6 ms tree read 14 in one process slowed 8x, and the search inside that commit
    found a hunk that "restored" it)."""
    if not here.key or here.key == state.bad_key or here.key not in state.configs:
        return None  # the range's bad end: calibration measured it more than once
    config = state.configs[here.key]
    if len(config.values) < 2 and len(config.launches) < MAX_LAUNCHES_PER_CONFIG:
        label = f"{config.label} {here.subject!r}"
        return request(state, here.key, f"bisect: the first bad commit, {label}, once more")
    if len(config.values) == len(here.values) and not here.recheck:
        return None  # judged on every launch it has
    return _test(state, here)


def _hot_first(state: InvestigationState, b: Bisection) -> PlannedLaunch | None:
    """The commit that wrote the hot lines, then its parent (agent/phases/hot_commit.py): bad
    and good, it is the first bad commit; else the bisection goes on, their launches kept."""
    hot, parent = b.hot
    for here, wanted in ((hot, "bad"), (parent, "good")):
        if not here.verdict and (more := _test(state, here)) is not None:
            return more
        if here.verdict != wanted:
            b.tried, b.hot = b.hot, []
            return None
    if (more := _second_look(state, hot)) is not None:
        return more
    if hot.verdict != "bad":
        b.tried, b.hot = b.hot, []
        return None
    b.hot = []
    _enter(b, [parent, hot], done=True)
    return None


def _enter(b: Bisection, states: list[RangeState], done: bool = False) -> None:
    """Bisect `states` from here on (a merge's side line; the hot commit and its parent,
    judged already), the first-parent line kept for the report."""
    b.mainline, b.states = b.states, states
    b.low, b.high, b.done = 0, len(states) - 1, done


def _test(state: InvestigationState, here: RangeState) -> PlannedLaunch | None:
    """A launch of `here` while its verdict is open; else its verdict, recorded."""
    verdict, why = judge(state, here)
    if verdict == RECHECK:  # `why` is the nearer neighbour's key: it, not a reference first
        here.recheck, label = why, state.configs[why].label
        return request(state, why, f"bisect: {label} again, beside a probe part of the way")
    if verdict == "more":
        config = state.configs[here.key]
        label = f"{config.label} {here.subject!r}"
        if not config.values:
            return request(state, config.key, f"bisect: the tree of {label}")
        return replicate(state, config.key, f"bisect: {label} again ({why})")
    here.verdict, here.why, here.recheck = verdict, why, ""  # type: ignore[assignment]
    here.partial = why.startswith(PART_WAY)
    here.values = list(state.configs[here.key].values)
    return None


def advance(state: InvestigationState, log: Callable[..., None]) -> None:
    """The first bad commit, then its hunks alone (hypothesize again), or straight to the
    search when the bisection narrowed nothing."""
    b = state.bisection
    state.phase = "search"
    if b is None or b.narrowed or b.whole:
        return
    for line in result_lines(b):
        log("plan", "verdict", line)
    state.notes.append(result_lines(b)[0])
    if len(b.states) > 2 and (b.low, b.high) == (0, len(b.states) - 1):  # nothing narrowed
        return
    if b.first_bad.partial:  # more causes after it: searched over the whole range, by hunk
        state.notes.append(
            f"{name(b.first_bad)[:12]} holds only part of the gap ({b.first_bad.why}): the "
            "rest lies in later commits, so the whole range is searched by hunk, commits first"
        )
        log("plan", "thought", state.notes[-1])
        return
    state.phase = "hypothesize"  # the first bad commit's own hunks (agent/narrow.py)


def result_lines(b: Bisection) -> list[str]:
    """What git bisect would print, and which commits could not be judged."""
    bad, skipped = b.first_bad, b.skipped_between()
    if skipped:
        could = ", ".join(name(s)[:12] for s in [*skipped, bad])
        first = (
            f"only skipped commits are left to test: the first bad commit could be any of "
            f"{could} (searched together, by hunk)"
        )
    else:
        first = f"{name(bad)} is the first bad commit"
    measured = any(s.sha == b.parent_sha and s.verdict == "good" for s in b.everything)
    parent = (
        f"{b.parent_sha[:12]} (its parent) measured good"
        if measured
        else f"{b.parent_sha[:12]} (its parent) is good by ancestry ({name(b.parent)[:12]}, "
        "which holds it, measured good)"
    )
    return [first, f"{parent}; {bad.why or 'the bad end'}"]
