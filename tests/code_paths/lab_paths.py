"""`paths` in a seed lab, as its server's log names it (Kimi-K2.5, triton, tp 8)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli


def lab_paths(lab: Path, folder: Path) -> dict[str, str]:
    """Each changed file's name and status (the log is written in `folder`)."""
    log = folder / "server.log"
    log.write_text(
        "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='moonshotai/Kimi-K2.5'"
        ", attention_backend='triton', tp_size=8)\n"
    )
    done = run_cli("paths", "--log", str(log), "--json", cwd=lab)
    assert done.returncode == 0, done.stderr
    return {Path(f["path"]).name: f["status"] for f in json.loads(done.stdout)["files"]}
