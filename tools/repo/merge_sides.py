"""The commits a merge brought in: its second parent's first-parent line since the merge base,
oldest first (where git bisect goes when the merge is the first bad commit)."""

from __future__ import annotations

import git
from pydantic import BaseModel, Field

_MARK = "debug-agent-side "


class SideCommit(BaseModel):
    sha: str
    subject: str
    author: str = ""
    date: str = ""
    files: list[str] = Field(default_factory=list)
    parent: str = ""  # its first parent (for the line's first commit: older than the base)


def side_commits(repo: git.Repo, merge: str) -> tuple[str, list[SideCommit]]:
    """(the merge base, the second parent's line after it); ("", []) for no merge."""
    try:
        parents = repo.commit(merge).parents
        if len(parents) < 2:
            return "", []
        bases = repo.merge_base(parents[0].hexsha, parents[1].hexsha)
    except (ValueError, git.GitCommandError):  # a shallow or partial clone lacks the parents
        return "", []
    if not bases or bases[0] is None:
        return "", []
    base, second = bases[0].hexsha, parents[1].hexsha
    try:
        text = repo.git.log(
            "--first-parent",
            "--reverse",
            "--no-renames",
            "--name-only",
            f"--format={_MARK}%H%x1f%P%x1f%an%x1f%aI%x1f%s",
            f"{base}..{second}",
        )
    except git.GitCommandError:
        return "", []
    side = []
    for chunk in ("\n" + text).split("\n" + _MARK)[1:]:
        head, *names = chunk.splitlines()
        sha, parents, author, date, subject = (head.split("\x1f", 4) + ["", "", "", ""])[:5]
        side.append(
            SideCommit(
                sha=sha,
                subject=subject,
                author=author,
                date=date,
                files=[n for n in names if n],
                parent=(parents.split() or [""])[0],
            )
        )
    return base, side
