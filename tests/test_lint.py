"""The code stays ruff clean (the rules are in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO_ROOT


def test_ruff_clean() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", str(REPO_ROOT)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
