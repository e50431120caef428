"""Which modules the server's processes really imported: the best on-path evidence there is.

`traced_env` adds a sitecustomize hook (tools/proc/hooks/) in front of the launch's PYTHONPATH; the
target's own sitecustomize still runs after it. `read_trace` maps the loaded files back to the
repository's paths.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path, PurePath

from pydantic import BaseModel

HOOK_DIR = Path(__file__).parent / "hooks"


class ImportTrace(BaseModel):
    processes: int  # processes that reported
    files: list[str]  # repo-relative paths of loaded source files, sorted
    pids: list[int] = []  # the processes that reported

    def imported(self, path: str) -> bool:
        return path in set(self.files)


def traced_env(
    env: dict[str, str],
    trace_dir: PurePath,
    cwd: PurePath,
    hook_dir: PurePath = HOOK_DIR,
    inherited: str | None = None,
) -> dict[str, str]:
    """`env` plus the hook; relative PYTHONPATH entries are made absolute against `cwd`.

    `inherited` is the PYTHONPATH the server would otherwise get (default: this process's).
    """
    original = env.get(
        "PYTHONPATH", os.environ.get("PYTHONPATH", "") if inherited is None else inherited
    )
    parts = [
        p if posixpath.isabs(p) else posixpath.normpath(posixpath.join(str(cwd), p))
        for p in original.split(os.pathsep)
        if p
    ]
    return {
        **env,
        "PYTHONPATH": os.pathsep.join([str(hook_dir), *parts]),
        "DEBUG_AGENT_IMPORT_TRACE_DIR": str(trace_dir),
    }


def read_trace(trace_dir: Path, tree: PurePath, resolve: bool = True) -> ImportTrace:
    """`resolve=False` for a remote tree: its paths mean nothing on this machine."""
    root = Path(tree).resolve() if resolve else Path(tree)
    files: set[str] = set()
    reports = sorted(trace_dir.glob("*.txt"))
    for report in reports:
        for line in report.read_text(errors="replace").splitlines()[1:]:
            try:
                rel = (Path(line).resolve() if resolve else Path(line)).relative_to(root)
            except (ValueError, OSError):
                continue
            files.add(rel.as_posix().replace("/__pycache__/", "/"))
    pids = sorted(int(r.stem) for r in reports if r.stem.isdigit())
    return ImportTrace(processes=len(reports), files=sorted(files), pids=pids)


FLUSH = "flush"  # a token written here asks every traced process to write its report now


def wait_for_trace(trace_dir: Path, pids: list[int], timeout_s: float = 3.0) -> None:
    """Ask every traced process to write its report now, and wait until each of `pids` still
    running has (a module the benchmark's last request imported is then in it). A process
    that never reported (no hook: started with -S, say) is not waited for."""
    import time
    import uuid

    import psutil

    token = uuid.uuid4().hex
    (trace_dir / FLUSH).write_text(token)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        waiting = [
            pid
            for pid in pids
            if (trace_dir / f"{pid}.txt").exists() and not _flushed(trace_dir, pid, token)
        ]
        if not [pid for pid in waiting if psutil.pid_exists(pid)]:
            return
        time.sleep(0.05)


def _flushed(trace_dir: Path, pid: int, token: str) -> bool:
    try:
        return (trace_dir / f"{pid}.flushed").read_text() == token
    except OSError:
        return False
