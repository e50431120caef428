"""Folders debug-agent writes: the machine-local state folder (pidfiles of servers it started,
lab truths, the masking key) and the sessions folder.

Sessions go to `./sessions/` by default, but never inside the repository under study (its working
tree is never written): there the state folder is used instead.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path


def _xdg(variable: str, default: Path) -> Path:
    """An XDG base folder: a relative one is invalid and ignored, as the spec says (it would put
    state under whatever folder a command runs in: the repository under study, often)."""
    value = Path(os.environ.get(variable) or default)
    return value if value.is_absolute() else default


def _given(variable: str) -> Path | None:
    """A folder named by one of our variables; a relative one from the folder a command runs in,
    made absolute so that every line names the same folder."""
    value = os.environ.get(variable)
    return Path(os.path.abspath(value)) if value else None


def state_dir() -> Path:
    return _given("DEBUG_AGENT_STATE_DIR") or (
        _xdg("XDG_STATE_HOME", Path.home() / ".local" / "state") / "debug-agent"
    )


def cache_dir() -> Path:
    """What can be made again (the environments of package sets): XDG's cache folder."""
    return _xdg("XDG_CACHE_HOME", Path.home() / ".cache") / "debug-agent"


MIN_FREE_BYTES = 64 << 20  # a session's logs and checkpoints need a few MB; fail early, not midway


def writable_dir(path: Path, what: str) -> Path:
    """`path`, created if need be, once shown writable with room to spare; else one clear line."""
    import shutil
    import tempfile

    from tools.errors import ToolError

    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write-check-"):
            pass
        free = shutil.disk_usage(path).free
    except OSError as e:
        # mkdir says "File exists" of a file where a folder belongs, on the way or at the end
        blocking = next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), None)
        if blocking is not None:
            which = "it" if blocking == path else str(blocking)
            raise ToolError(
                f"cannot write {what} {path}: {which} is a file, not a folder (move it "
                "aside, or point DEBUG_AGENT_SESSIONS_DIR / DEBUG_AGENT_STATE_DIR elsewhere)"
            ) from None
        raise ToolError(f"cannot write {what} {path}: {e.strerror or e}") from None
    if free < MIN_FREE_BYTES:
        raise ToolError(
            f"{what} {path} has only {free >> 20} MB free: make room (or point "
            f"DEBUG_AGENT_SESSIONS_DIR / DEBUG_AGENT_STATE_DIR elsewhere)"
        )
    return path


def _enclosing_repo(cwd: Path) -> Path | None:
    """The work tree `cwd` lies in (a folder holding `.git`), if any."""
    here = cwd.resolve()
    return next((p for p in (here, *here.parents) if (p / ".git").exists()), None)


def at_repo_root(cwd: Path, name: str) -> Path | None:
    """The file `name` at the root of the repository `cwd` lies in, as git finds its own from
    a subfolder; None where there is none."""
    root = _enclosing_repo(cwd)
    return root / name if root is not None and (root / name).is_file() else None


def sessions_root(cwd: Path, repo_root: Path | None, explicit: Path | None = None) -> Path:
    """Where sessions are kept: the folder given, $DEBUG_AGENT_SESSIONS_DIR, the state folder
    when working inside a repository (never a folder in the user's tree), else ./sessions.
    The repository is the target's (`repo_root`) or any other `cwd` lies in: the seed lab run
    from a repository of the user's that has no config wrote its sessions into that tree."""
    if explicit is not None:
        return explicit
    given = _given("DEBUG_AGENT_SESSIONS_DIR")
    if given is not None:
        return given
    here = cwd.resolve()
    repos = [r for r in (repo_root, _enclosing_repo(cwd)) if r is not None]
    if any(here.is_relative_to(r.resolve()) for r in repos):
        return state_dir() / "sessions"
    return cwd / "sessions"


def new_run_dir(root: Path, label: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = writable_dir(root, "the sessions folder") / f"{stamp}-{label}-{secrets.token_hex(2)}"
    path.mkdir()
    return path
