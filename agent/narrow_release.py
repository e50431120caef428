"""After a package's first slow release is found: the investigation goes on inside it.

The release before it becomes the good reference and the first slow release the bad one, each
with the launches the release search made of it; the candidates become the hunks between the
two releases' files (tools/stack/inside_release.py), each state the target's bad tree in the
bad package set with that package at its slow release, the patched package put first on
PYTHONPATH. The investigation's references stay in the state under keys of their own, so their
launches still count in the noise.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent.levels import all_ids, ensure_config, update_levels
from agent.runner import Runner
from agent.state import InvestigationState, Variant
from tools.errors import ToolError
from tools.repo.candidates import CandidateSet
from tools.repo.commit_groups import CommitGroups, commit_groups
from tools.repo.worktree import open_repo
from tools.secrets import mask


def into_release(state: InvestigationState, runner: Runner, log: Callable[..., None]) -> None:
    r = state.releases
    if r is None or not r.done or r.narrowed:
        return
    r.narrowed = True
    before, slow = r.parent, r.first_bad
    try:
        cands = runner.narrowed_release(r.package, (before.sha or "", slow.sha or ""))
    except ToolError as e:  # its files cannot be had: the release is the answer
        cands = None
        log("plan", "thought", f"the source inside {slow.subject} cannot be compared: {e}")
    if cands is None or not cands.candidates:
        state.phase = "report"
        return
    good, bad = state.configs.pop(before.key), state.configs.pop(slow.key, None)
    for key, new_key, label in (
        (state.good_key, "stack-good", "good (its package set)"),
        (state.bad_key, "stack-bad", "bad (its package set)"),
    ):
        if key in state.configs:  # the investigation's references, kept for the noise
            kept = state.configs.pop(key)
            update = {"key": new_key, "label": label, "ids": [], "commit": "stack"}
            state.configs[new_key] = kept.model_copy(update=update)
    _rebase(state, cands, good, bad or good)
    overlay = cands.overlay
    assert overlay is not None  # release_candidates always sets it
    state.package_source = (overlay.repo, overlay.head)
    if overlay.history:  # the project's commits between the two releases, searched first
        state.commits = commit_groups(
            open_repo(Path(overlay.repo)), cands.good_sha, state.candidates, overlay.head
        )
    state.configs[state.good_key].label = f"good ({before.subject})"
    state.configs[state.bad_key].label = f"bad ({slow.subject})"
    before.key, slow.key = state.good_key, state.bad_key
    state.good_sha = cands.good_sha
    # the trace says which of the target's files ran, not which of the package's
    assert state.facts is not None
    state.facts = state.facts.model_copy(update={"trace": None, "good_trace": None})
    commits = len(state.commits.commits)
    log(
        "plan",
        "thought",
        f"searching inside {slow.subject}: {len(state.candidates)} hunk(s) against "
        f"{before.subject}"
        + (f" in {commits} commit(s)" if commits else "")
        + f", read from {overlay.note}; its patched files in front of the installed copy",
    )


def _rebase(state: InvestigationState, cands: CandidateSet, good: Variant, bad: Variant) -> None:
    """The package's hunks as the candidates, the two releases as the references."""
    state.candidates = mask(cands).candidates
    state.commits = CommitGroups()  # the package's hunks belong to no commit of the range
    state.hypotheses, state.links = {}, []  # what was dropped stays: the packages no launch ran
    state.tasks, state.findings, state.confirmation, state.status = [], [], None, None
    new_good, new_bad = ensure_config(state, set()), ensure_config(state, all_ids(state))
    new_good.launches, new_bad.launches = good.launches, bad.launches
    state.good_key, state.bad_key = new_good.key, new_bad.key
    for config in state.configs.values():  # levels of the old ends: judged anew
        config.level = None
    update_levels(state)
    state.since_reference = 0  # both references were measured by the release search
