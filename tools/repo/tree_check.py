"""The tree check: do the candidates, with what is carried, rebuild the user's working tree exactly?

Every experiment's bad state is the good commit plus every candidate plus what is carried, built
in a scratch worktree. If that tree is not the working tree byte for byte, a change went missing
between the two and any verdict would be about another tree: this says so before any search.

Both sides are compared as git tree hashes. The working tree's comes from a scratch copy of its
index (`git add --all`, `git write-tree`): the user's index is never written (git stores the new
blobs in the object database, as any `git add` would). Only debug-agent's own files are left out
of both sides, and repositories with no commit, which no git tree can hold (named in `left_out`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import git
from pydantic import BaseModel

from tools.repo.candidates import CandidateSet, own_paths
from tools.repo.git_failure import git_said
from tools.repo.git_isolation import scratch_git
from tools.repo.target import Target
from tools.repo.worktree import (
    GitError,
    add_paths,
    literal,
    open_repo,
    scratch_index,
    scratch_worktree,
    untracked_paths,
)


class TreeCheck(BaseModel):
    ok: bool
    reason: str  # one line: why not, or what was compared
    working_tree: str  # git tree hash of the working tree
    rebuilt: str | None  # git tree hash of good + every candidate + carried; None if unbuildable
    differ: list[str]  # "M\tpath" per path that differs (git diff-tree --name-status)
    carried: list[str]  # what the rebuilt tree carries as-is (CandidateSet.carried)
    left_out: list[str]  # paths neither side holds: debug-agent's own, commitless repositories


def _tree_hash(cmd: git.Git, own: Sequence[str]) -> tuple[str, list[str]]:
    """The tree of the folder `cmd` runs in (its index already a scratch one), `own` left out;
    and the repositories with no commit it cannot hold."""
    listed, commitless = untracked_paths(cmd, own)
    cmd.add("--update")  # changed and deleted tracked files
    add_paths(cmd, listed)
    if own:  # tracked copies too: both sides lose them alike
        cmd.rm("--cached", "-r", "-q", "--ignore-unmatch", "--", *literal(own))
    return cmd.write_tree(), commitless


def dirty_submodules(repo: git.Repo) -> list[str]:
    """Submodules with changes inside their own working tree (modified or untracked files),
    which no patch of the superproject holds: only a new commit of theirs is a gitlink change.
    A repository without .gitmodules has none, and is spared a full `git status`."""
    if not (Path(str(repo.working_tree_dir)) / ".gitmodules").is_file():
        return []
    status = repo.git.status("--porcelain=v2", "-z", "--ignore-submodules=none")
    found = []
    for entry in status.split("\0"):
        fields = entry.split(" ", 8)
        # "1 XY S<c><m><u> ...": m, tracked changes; u, untracked files (v2's submodule state)
        state = fields[2] if len(fields) == 9 and fields[0] == "1" else ""
        if state.startswith("S") and (state[2] == "M" or state[3] == "U"):
            found.append(fields[8])
    return found


def unmerged_paths(repo: git.Repo) -> list[str]:
    """Paths the index holds in conflict (a merge, rebase or stash pop stopped half-way): the
    working tree holds conflict markers there, no state anyone ran."""
    listed = repo.git.ls_files("--unmerged", "-z").split("\0")
    return sorted({entry.split("\t", 1)[1] for entry in listed if "\t" in entry})


def _unbuildable(repo: git.Repo) -> str | None:
    """Why no scratch tree can be the working tree, before any is built."""
    dirty = dirty_submodules(repo)
    if dirty:
        return (
            f"submodule {dirty[0]} has uncommitted changes inside it, which no scratch tree "
            "can carry: commit them in the submodule (a new commit is a change the search can "
            "test) or stash them, then start again"
        )
    unmerged = unmerged_paths(repo)
    if unmerged:
        more = f" (and {len(unmerged) - 1} more)" if len(unmerged) > 1 else ""
        return (
            f"{unmerged[0]}{more} has an unresolved conflict: resolve it and `git add` it, or "
            "abort what stopped (git merge --abort, git rebase --abort), then start again"
        )
    return None


def check_tree(repo_dir: Path, cands: CandidateSet, own: Sequence[str]) -> TreeCheck:
    """Rebuild the bad state from `cands` and compare it with the working tree of `repo_dir`.
    A difference is an answer (ok=False), not an error; GitError only when git itself fails."""
    repo = open_repo(repo_dir)
    unbuildable = _unbuildable(repo)
    if unbuildable:
        return TreeCheck(
            ok=False,
            reason=unbuildable,
            working_tree="",
            rebuilt=None,
            differ=[],
            carried=cands.carried,
            left_out=[],
        )
    try:
        with scratch_index(repo):
            working, commitless = _tree_hash(repo.git, own)
    except git.GitCommandError as e:
        raise GitError(f"cannot read the working tree of {repo_dir}: {git_said(e)}") from None
    patches = [c.patch for c in cands.candidates if c.kind == "hunk"] + [cands.carried_patch]
    found = TreeCheck(
        ok=False,
        reason="",
        working_tree=working,
        rebuilt=None,
        differ=[],
        carried=cands.carried,
        left_out=[*own, *commitless],
    )
    try:
        with scratch_worktree(repo_dir, cands.good_sha, [p for p in patches if p]) as tree:
            found.rebuilt = _tree_hash(scratch_git(tree, repo), own)[0]
    except GitError as e:  # the patches do not apply: an answer
        found.reason = f"the candidates cannot rebuild the working tree: {e}"
        return found
    except git.GitCommandError as e:
        raise GitError(f"cannot build the bad state in a scratch worktree: {git_said(e)}") from None
    listed = repo.git.diff_tree(
        "-r",
        "--name-status",
        "-z",
        "--no-renames",
        found.rebuilt,
        working,
        strip_newline_in_stdout=False,
    ).split("\0")[:-1]  # status, path, status, path, ..., ""
    pairs = zip(listed[0::2], listed[1::2], strict=True)
    found.differ = [f"{status}\t{path}" for status, path in pairs]
    found.ok = found.rebuilt == working
    found.reason = (
        f"good + {len(patches) - 1} candidate patches + carried rebuild the working tree"
        if found.ok
        else f"the rebuilt bad state and the working tree differ in {len(found.differ)} "
        f"path(s): {', '.join(found.differ[:5])}"
    )
    return found


def check_target(target: Target) -> TreeCheck:
    """The tree check of a target (for one on a node: of its local mirror)."""
    root = Path(str(open_repo(target.source_dir()).working_tree_dir))
    return check_tree(root, target.cands, own_paths(root, target.config_dir))
