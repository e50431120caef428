"""Shared fixtures: real labs in temp folders, the real CLI in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from tools.lab.create import create_lab

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True, scope="session")
def _lab_truth_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Keep the labs' ground truth out of the user's home during tests."""
    os.environ["DEBUG_AGENT_LAB_TRUTH_DIR"] = str(tmp_path_factory.mktemp("truth"))


@pytest.fixture(scope="session")
def seed_lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One seed lab for the session; tests must not change it (copy it first)."""
    lab = tmp_path_factory.mktemp("labs") / "seed"
    create_lab("seed", lab)
    return lab


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 120,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


def processes_under(path: Path) -> list[psutil.Process]:
    """Live processes whose working directory is `path` (a lab's server runs there)."""
    found = []
    for proc in psutil.process_iter(["cwd", "status"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if proc.info["cwd"] and Path(proc.info["cwd"]) == path:
                found.append(proc)
        except psutil.Error:
            continue
    return found
