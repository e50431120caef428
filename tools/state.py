"""Where debug-agent keeps machine-local state: pidfiles of servers it started, lab truths."""

from __future__ import annotations

import os
from pathlib import Path


def state_dir() -> Path:
    explicit = os.environ.get("DEBUG_AGENT_STATE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "debug-agent"


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
        raise ToolError(f"cannot write {what} {path}: {e.strerror or e}") from None
    if free < MIN_FREE_BYTES:
        raise ToolError(f"{what} {path} has only {free >> 20} MB free: make room (or point "
                        f"DEBUG_AGENT_SESSIONS_DIR / DEBUG_AGENT_STATE_DIR elsewhere)")
    return path
