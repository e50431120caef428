"""Prior-weighted delta debugging over the kept candidates, one launch at a time.

A task holds candidates `ids` between two measured configs: `low` (none of them changed) and
`high` (all of them changed: reverted from bad, or for a partner search applied to good). Its
first half is tried; the verdict sends the search into that half (restored), the other half
(none: by elimination, the first time), both (partial: additive causes), or, when a search is
re-run because elimination misled it, the other half is measured too and "none" twice sends it
into both halves with the other one changed as context (they interfere: dd's rule). Halves
split by prior mass, not by count; a dominant candidate is tried alone; hunks of one file stay
together while other files remain. Every few launches a reference is measured again (drift).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agent.levels import (
    MAX_LAUNCHES_PER_CONFIG,
    between,
    ensure_config,
    held,
    replicate,
    request,
    unresolved,
)
from agent.phases.commit_split import commit_split, describe, spans_commits
from agent.phases.launches import drift_check
from agent.state import Finding, InvestigationState, PlannedLaunch, Task
from agent.stats import SEARCH_ALPHA

DOMINANT = 0.5  # a candidate with this share of the mass is tried alone first


def _weight(state: InvestigationState, cid: str) -> float:
    hypothesis = state.hypotheses.get(cid)
    return hypothesis.prior if hypothesis else 1.0


def _file(state: InvestigationState, cid: str) -> str:
    candidate = state.candidate(cid)
    return candidate.file or cid


_NAME_LITERAL = re.compile(r"""["']([A-Z][A-Z0-9_]{5,})["']""")


def names_used(state: InvestigationState, cid: str) -> set[str]:
    """Env-var-like names a candidate's changed lines mention (none for env or arg candidates)."""
    c = state.candidate(cid)
    if c.kind != "hunk":  # an env var set at launch and a hunk setting it are alternatives,
        return set()  # not a pair that needs both
    return set(_NAME_LITERAL.findall("\n".join(c.changed_lines())))


def _components(state: InvestigationState, ids: list[str], by_file: bool) -> list[list[str]]:
    """Candidates that belong together: a link read from the code (one defines what another
    uses), a name one sets and another reads (grouping by shared identifiers, as Zeller's GDB
    study did) and, with `by_file`, the same file."""
    parent = {cid: cid for cid in ids}

    def root(cid: str) -> str:
        while parent[cid] != cid:
            cid = parent[cid]
        return cid

    def join(a: str, b: str) -> None:
        parent[root(a)] = root(b)

    by_key: dict[str, str] = {}
    for cid in ids:
        keys = names_used(state, cid) | ({"file:" + _file(state, cid)} if by_file else set())
        for key in keys:
            if key in by_key:
                join(cid, by_key[key])
            else:
                by_key[key] = cid
    for link in state.links:
        if link.a in parent and link.b in parent:
            join(link.a, link.b)
    groups: dict[str, list[str]] = {}
    for cid in ids:
        groups.setdefault(root(cid), []).append(cid)
    return list(groups.values())


def units(state: InvestigationState, ids: list[str]) -> list[list[str]]:
    """What a split keeps together where it can: linked candidates and hunks of one file."""
    return _components(state, ids, by_file=True)


def linked(state: InvestigationState, ids: list[str]) -> bool:
    """All of `ids` move together (links, shared names): they act as one change."""
    return len(ids) > 1 and len(_components(state, ids, by_file=False)) == 1


def split(state: InvestigationState, ids: list[str]) -> tuple[list[str], list[str]]:
    """Two halves by prior mass: a dominant candidate alone; else, over several commits, the
    later commits and the earlier ones; else never splitting what must move together (links,
    names) and keeping files whole where it can."""
    ranked = sorted(ids, key=lambda i: (-_weight(state, i), i))
    total = _mass(state, ranked)
    hard = _components(state, ranked, by_file=False)
    top = next(group for group in hard if ranked[0] in group)
    if _weight(state, ranked[0]) >= DOMINANT * total and len(top) < len(ranked):
        return top, [i for i in ranked if i not in top]
    by_commit = _commit_halves(state, ranked)
    if by_commit is not None:
        return by_commit
    for groups in (units(state, ranked), hard, [[cid] for cid in ranked]):
        if len(groups) < 2:
            continue
        groups.sort(key=lambda g: (-_mass(state, g), g))
        first = _nearest_half(state, groups, total)
        return first, [i for i in ranked if i not in first]
    return ranked[: len(ranked) // 2], ranked[len(ranked) // 2 :]


def _nearest_half(state: InvestigationState, groups: list[list[str]], total: float) -> list[str]:
    """The heaviest groups whose mass comes nearest half the total (never all of them): a
    probe as likely to restore as not tells the most."""
    best: list[str] = []
    first: list[str] = []
    for group in groups[:-1]:
        first = first + group
        if not best or abs(_mass(state, first) - total / 2) < abs(_mass(state, best) - total / 2):
            best = first
    return best


def _mass(state: InvestigationState, ids: list[str]) -> float:
    return sum(_weight(state, i) for i in ids)


def _commit_halves(state: InvestigationState, ids: list[str]) -> tuple[list[str], list[str]] | None:
    hard = _components(state, ids, by_file=False)
    return commit_split(state, hard, {i: _weight(state, i) for i in ids})


def _changed(state: InvestigationState, task: Task, subset: list[str]) -> str:
    """The config that changes `subset` on top of the task's low end."""
    base = held(state, task.low_key)
    new = base - set(subset) if task.kind == "locate" else base | set(subset)
    return ensure_config(state, new).key


Chooser = Callable[[str, list[str]], int | None]


def start(state: InvestigationState) -> None:
    """After calibration: one task over the kept candidates (all of them when none is kept)."""
    kept = [cid for cid, h in state.hypotheses.items() if h.status == "open"]
    if not kept:
        kept = list(state.hypotheses)
    state.tasks = [Task(ids=kept, low_key=state.bad_key, high_key=state.good_key)]


def plan(state: InvestigationState, chooser: Chooser | None = None) -> PlannedLaunch | None:
    """A drift check when one is due, else the next launch the search needs; None when no
    task is left."""
    return drift_check(state) or _narrow(state, chooser)


def advance(state: InvestigationState, log: Callable[..., None]) -> None:
    """Nothing found: inconclusive (to the report); else the findings go to confirmation."""
    if state.findings:
        state.phase = "confirm"
        return
    state.status = "inconclusive"
    state.phase = "report"
    log("plan", "thought", "the search found no candidate that restores any share of the gap")


def _narrow(state: InvestigationState, chooser: Chooser | None = None) -> PlannedLaunch | None:
    """The next launch of the delta debugging; None when no task is left.

    `chooser` (the LLM reasoner) may pick which half is tried first; the planner offers both.
    """
    while state.tasks:
        task = state.tasks[0]
        if task.stage == "start":
            if len(task.ids) == 1 or linked(state, task.ids):
                state.findings.append(
                    Finding(ids=task.ids, low_key=task.low_key, high_key=task.high_key)
                )
                state.tasks.pop(0)
                continue
            _start(state, task, chooser)
        key = task.first_key if task.stage == "first" else _changed(state, task, task.second)
        config = state.configs[key or ""]
        if not unresolved(config) and (
            not config.values
            or (
                _verdict(state, task, key or "") == "unknown"
                and len(config.values) < MAX_LAUNCHES_PER_CONFIG
            )
        ):
            half = task.first if task.stage == "first" else task.second
            verb = "revert" if task.kind == "locate" else "apply"
            commits = f"{describe(state, half)}: " if spans_commits(state, task.ids) else ""
            why = f"search: {verb} {commits}{{{', '.join(half)}}} ({config.label})"
            return (
                replicate(state, key or "", why)
                if config.values
                else request(state, key or "", why)
            )
        judge(state, task, key or "")
    return None


def _start(state: InvestigationState, task: Task, chooser: Chooser | None) -> None:
    task.first, task.second = split(state, task.ids)
    if chooser is not None and len(task.first) and len(task.second):
        verb = "revert" if task.kind == "locate" else "apply"
        pick = chooser(
            f"Which {verb} experiment should run first?",
            [f"{verb} {{{', '.join(h)}}}" for h in (task.first, task.second)],
        )
        if pick == 2:
            task.first, task.second = task.second, task.first
    task.first_key = _changed(state, task, task.first)
    probe = _commit_halves(state, task.ids) if task.kind == "locate" else None
    task.by_commit = probe is not None and set(probe[0]) == set(task.first)
    task.stage = "first"


def _verdict(state: InvestigationState, task: Task, key: str) -> str:
    """The half's verdict; "unresolved" when it cannot run or stays unclear at its cap (no
    verdict without significance: never the nearer end)."""
    config = state.configs[key]
    if unresolved(config):
        return "unresolved"
    if not config.values:
        return "unknown"
    result = between(state, key, task.low_key, task.high_key, alpha=SEARCH_ALPHA)
    if result.verdict == "unknown" and len(config.values) >= MAX_LAUNCHES_PER_CONFIG:
        return "unresolved"
    return result.verdict


def _why_unresolved(state: InvestigationState, key: str) -> str:
    config = state.configs[key]
    if config.failures:
        failure = config.failures[-1]
        return f"{config.label} did not run ({failure.stage}: {failure.error})"
    return f"{config.label} stayed unclear after {len(config.values)} launches"


def judge(state: InvestigationState, task: Task, key: str) -> None:
    """Replace `task` by what the verdict on `key` (the half just tried) implies."""
    verdict = _verdict(state, task, key)
    state.tasks.pop(0)
    low, high = task.low_key, task.high_key

    def sub(ids: list[str], low_key: str, high_key: str, checked: bool | None = None) -> Task:
        return Task(
            kind=task.kind,
            ids=ids,
            low_key=low_key,
            high_key=high_key,
            interference_checked=task.interference_checked if checked is None else checked,
        )

    tried, rest = (task.first, task.second) if task.stage == "first" else (task.second, task.first)
    if verdict == "unresolved":
        new = _around_unresolved(state, task, key, sub)
    elif verdict == "restored":
        new = [sub(tried, low, key)]
    elif verdict == "partial":  # additive: this half's share, then the rest on top of it
        new = [sub(tried, low, key), sub(rest, key, high)]
    elif task.stage == "second" and task.first_unresolved:
        new = [sub(rest, low, high, checked=True)]  # by elimination: the half that cannot run
    elif task.stage == "first" and not task.interference_checked:
        # nothing in the first half: the other half, by elimination (if the halves
        # interfere instead, confirmation finds out and the search runs again, checked);
        # past a bisect probe, from the probe's tree, as git bisect goes on from it
        new = [sub(rest, key if task.by_commit else low, high)]
    elif task.stage == "first":
        task.stage = "second"
        new = [task]
    else:  # neither half alone: they interfere; search each with the other changed
        new = [
            sub(task.first, key, high, checked=True),
            sub(task.second, task.first_key or "", high, checked=True),
        ]
    state.tasks[:0] = new


def _around_unresolved(
    state: InvestigationState, task: Task, key: str, sub: Callable[..., Task]
) -> list[Task]:
    """A half that cannot be judged (ddmin's "?"): try its complement; when neither half can,
    a finer split of each; two single candidates that cannot be told apart are one finding,
    and the report says why."""
    state.notes.append(f"search: {_why_unresolved(state, key)}")
    if task.stage == "first":
        task.stage, task.first_unresolved = "second", True
        return [task]
    if not task.first_unresolved:  # the first half did nothing; the second cannot be judged
        return [sub(task.second, task.low_key, task.high_key, checked=True)]
    halves = [h for h in (task.first, task.second) if len(h) > 1]
    if not halves:
        state.notes.append(
            f"could not separate {{{', '.join(task.ids)}}}: neither alone could be judged"
        )
        state.findings.append(Finding(ids=task.ids, low_key=task.low_key, high_key=task.high_key))
        return []
    for single in (h for h in (task.first, task.second) if len(h) == 1):
        state.notes.append(f"could not judge {single[0]} alone: left out of the search")
    return [sub(h, task.low_key, task.high_key, checked=True) for h in halves]
