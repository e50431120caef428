"""The code stays ruff clean, ruff-formatted and mypy clean (the settings are in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO_ROOT


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, cwd=REPO_ROOT
    )


def test_ruff_clean() -> None:
    done = _run("ruff", "check", str(REPO_ROOT))
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_owns_the_layout() -> None:
    done = _run("ruff", "format", "--check", "agent", "tools", "tests")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_clean(mypy_answer: tuple[int, str]) -> None:
    rc, output = mypy_answer  # mypy started with the session (conftest)
    assert rc == 0, output[-5000:]
