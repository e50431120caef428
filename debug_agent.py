"""The `debug-agent` command's entry: debug-agent's own `agent` and `tools` packages first.

Their names are common ones: run with PYTHONPATH=. in a repository that has a `tools/` or an
`agent/` package of its own (many do), Python found the repository's first, and every command
was a traceback. This module's name is debug-agent's alone, so it loads whatever the path holds.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HOME = str(Path(__file__).resolve().parent)  # where `agent` and `tools` were installed


def main() -> None:
    if sys.path[:1] != [_HOME]:
        sys.path.insert(0, _HOME)
    from agent.cli.main import main as run

    run()
