"""Process groups: start a command in its own group, and stop the whole group, always."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import psutil

from tools.errors import ToolError
from tools.proc import group_keeper


def start_group(
    argv: list[str], cwd: Path, env: dict[str, str], output: IO | int | None = None
) -> subprocess.Popen:
    """Start `argv` as the leader of a new session, so the group can be stopped as one.

    A keeper (tools/proc/group_keeper.py) stops the group if this process dies before `stop_group`.
    """
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT if output is not None else None,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    except (FileNotFoundError, PermissionError, NotADirectoryError) as e:
        raise ToolError(f"cannot start {argv[0]!r} in {cwd}: {e.strerror}") from None
    try:
        group_keeper.keep(proc.pid)
    except BaseException:
        stop_group(proc)
        raise
    return proc


def _is_live(proc: psutil.Process) -> bool:
    """Running and not a zombie (a zombie is dead; only its exit status is left)."""
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def live_group_members(pgid: int) -> list[psutil.Process]:
    members = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid and _is_live(proc):
                members.append(proc)
        except OSError:
            continue
    return members


def stop_group(proc: subprocess.Popen, grace_s: float = 5.0) -> int | None:
    """SIGTERM the group, SIGKILL whatever is left after `grace_s`; return the leader's code.

    Descendants that left the group (setsid) are found from the process tree taken first.
    """
    pgid = proc.pid
    try:
        descendants = psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        descendants = []
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        leftovers = live_group_members(pgid) + [p for p in descendants if _is_live(p)]
        if proc.poll() is not None and not leftovers:
            break
        time.sleep(0.02)
    for straggler in live_group_members(pgid) + [p for p in descendants if _is_live(p)]:
        with contextlib.suppress(psutil.Error):
            straggler.kill()
    group_keeper.release(pgid)
    try:
        return proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        return None


def run_until_signal(proc: subprocess.Popen, on_stop: Callable[[], None] | None = None) -> int:
    """Wait for `proc`; on SIGINT/SIGTERM (or any exception) stop its whole group first."""
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    for sig in previous:
        signal.signal(sig, interrupt)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        if on_stop:
            on_stop()
        return 130
    finally:
        stop_group(proc)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
