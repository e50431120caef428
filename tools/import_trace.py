"""Which modules the server's processes really imported: the best on-path evidence there is.

`traced_env` adds a sitecustomize hook (tools/hooks/) in front of the launch's PYTHONPATH; the
target's own sitecustomize still runs after it. `read_trace` maps the loaded files back to the
repository's paths.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel

HOOK_DIR = Path(__file__).parent / "hooks"


class ImportTrace(BaseModel):
    processes: int  # processes that reported
    files: list[str]  # repo-relative paths of loaded source files, sorted

    def imported(self, path: str) -> bool:
        return path in set(self.files)


def traced_env(env: dict[str, str], trace_dir: Path, cwd: Path) -> dict[str, str]:
    """`env` plus the hook: relative PYTHONPATH entries are made absolute against `cwd`."""
    trace_dir.mkdir(parents=True, exist_ok=True)
    original = env.get("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
    parts = [str((cwd / p).resolve()) if p and not os.path.isabs(p) else p
             for p in original.split(os.pathsep) if p]
    return {**env, "PYTHONPATH": os.pathsep.join([str(HOOK_DIR), *parts]),
            "DEBUG_AGENT_IMPORT_TRACE_DIR": str(trace_dir)}


def read_trace(trace_dir: Path, tree: Path) -> ImportTrace:
    root = tree.resolve()
    files: set[str] = set()
    reports = sorted(trace_dir.glob("*.txt"))
    for report in reports:
        for line in report.read_text(errors="replace").splitlines()[1:]:
            try:
                rel = Path(line).resolve().relative_to(root)
            except (ValueError, OSError):
                continue
            files.add(rel.as_posix().replace("/__pycache__/", "/"))
    return ImportTrace(processes=len(reports), files=sorted(files))


def wait_for_trace(trace_dir: Path, pids: list[int], timeout_s: float = 3.0) -> None:
    """Wait until each of `pids` has written its report (processes dump every half second)."""
    import time

    deadline = time.monotonic() + timeout_s
    wanted = {f"{pid}.txt" for pid in pids}
    while time.monotonic() < deadline:
        if wanted <= {p.name for p in trace_dir.glob("*.txt")}:
            return
        time.sleep(0.05)
