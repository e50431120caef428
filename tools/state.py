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
