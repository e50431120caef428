"""Shared fixtures: real labs in temp folders, the real CLI in a subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from tools.lab.changes import Change
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


def lab_copy_reverting(lab: Path, tmp_path: Path, changes: list[Change]) -> Path:
    """A copy of `lab` with `changes` undone in its working tree (the lab is not touched)."""
    copy = tmp_path / f"lab-{len(list(tmp_path.iterdir()))}"
    shutil.copytree(lab, copy, ignore=shutil.ignore_patterns("__pycache__", ".debug-agent-logs"))
    for change in changes:
        if not change.old:  # a new file: undoing it removes it
            (copy / change.file).unlink()
            continue
        Change(**{**change.model_dump(), "old": change.new, "new": change.old}).apply(copy)
    return copy
