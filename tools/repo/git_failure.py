"""A git command that failed, said in one line: which command, and git's own last words
(GitPython's message is three lines that begin "Cmd('git') failed due to: exit code(128)").
A partial clone whose remote cannot send a missing object says what to do."""

from __future__ import annotations

import shutil
import tempfile

import git

from tools.errors import ToolError

_PROMISOR = "from promisor remote"
LOW_SPACE = 256 << 20  # bytes free in the temp folder below which a failed write is for space


def git_said(e: git.GitCommandError) -> str:
    """git's last line of complaint (GitPython quotes the whole stderr as `stderr: '…'`)."""
    text = str(e.stderr or "").strip()
    if text.startswith("stderr: '") and text.endswith("'"):
        text = text.removeprefix("stderr: '")[:-1]
    said = [line.strip() for line in text.splitlines() if line.strip()]
    return (said[-1] if said else f"exit code {e.status}") + _space_hint(text)


def _space_hint(said: str) -> str:
    """Where a write failed for space: the temp folder, ours, not the user's disk (git says
    "No space left on device", or of a checkout only "unable to write file")."""
    if "No space left on device" not in said and "unable to write" not in said:
        return ""
    folder = tempfile.gettempdir()
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return ""
    if free > LOW_SPACE and "No space left on device" not in said:
        return ""  # another cause
    return (
        f" ({folder}, where debug-agent's scratch trees and git objects go, has "
        f"{free >> 20} MB free: free space there, or set TMPDIR to a larger folder)"
    )


def git_failure(e: git.GitCommandError) -> str:
    command = e.command if isinstance(e.command, list) else str(e.command).split()
    sub = next((str(a) for a in command[1:] if not str(a).startswith("-")), "")
    line = f"git {sub} failed: {git_said(e)}"
    if _PROMISOR in str(e.stderr):
        line += (
            " (a partial clone: its remote must send the objects it left out; make the remote"
            " reachable, or investigate a full clone)"
        )
    return line


def error_line(error: BaseException) -> str:
    """One line for an error that stopped a command or an investigation."""
    if isinstance(error, git.GitCommandError):
        return git_failure(error)
    line = next(iter(str(error).strip().splitlines()), "")
    return line if isinstance(error, ToolError) else f"{type(error).__name__}: {line}"
