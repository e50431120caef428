"""Where sessions and experiment artifacts go.

`./sessions/` by default; but never inside the repository under study (its working tree is
never written), so there the state folder is used instead.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

from tools.state import state_dir, writable_dir


def sessions_root(cwd: Path, repo_root: Path | None, explicit: Path | None = None) -> Path:
    if explicit is not None:
        return explicit
    env = os.environ.get("DEBUG_AGENT_SESSIONS_DIR")
    if env:
        return Path(env)
    if repo_root is not None and cwd.resolve().is_relative_to(repo_root.resolve()):
        return state_dir() / "sessions"
    return cwd / "sessions"


def new_run_dir(root: Path, label: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = writable_dir(root, "the sessions folder") / f"{stamp}-{label}-{secrets.token_hex(2)}"
    path.mkdir()
    return path
