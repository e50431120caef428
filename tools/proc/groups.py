"""Process groups: start a command in its own group, and stop the whole group, always.

The group is not the whole tree: a child may leave it (setsid) and a daemon double-forks, its
parent gone. So this process is a child subreaper (Linux): a descendant orphaned anywhere below
it is re-parented here, not to init, and stays findable. Each launch carries a token in its
environment, which its descendants inherit, so that the orphans re-parented here are told
apart by launch when several run side by side.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import psutil

from tools.errors import ToolError
from tools.proc import group_keeper

TOKEN = "DEBUG_AGENT_TREE"  # in each launch's environment: which launch a process is of
_PR_SET_CHILD_SUBREAPER = 36
_tokens: dict[int, str] = {}  # leader pid -> its launch's token


@functools.cache
def _become_subreaper() -> None:
    """Orphans below this process come here instead of to init (once; Linux only)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _orphans_of(token: str) -> list[psutil.Process]:
    """Processes re-parented to this one (their parent died) that belong to the launch."""
    found = []
    for child in psutil.Process().children():
        try:
            if child.environ().get(TOKEN) == token:
                found.append(child)
        except psutil.Error:
            continue
    return found


def start_group(
    argv: list[str], cwd: Path, env: dict[str, str], output: IO | int | None = None
) -> subprocess.Popen:
    """Start `argv` as the leader of a new session, so the group can be stopped as one.

    A keeper (tools/proc/group_keeper.py) stops the group if this process dies before `stop_group`.
    """
    _become_subreaper()
    token = secrets.token_hex(8)
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env={**env, TOKEN: token},
            stdout=output,
            stderr=subprocess.STDOUT if output is not None else None,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    except (FileNotFoundError, PermissionError, NotADirectoryError) as e:
        raise ToolError(f"cannot start {argv[0]!r} in {cwd}: {e.strerror}") from None
    _tokens[proc.pid] = token
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
    """SIGTERM the launch's whole tree, SIGKILL whatever is left after `grace_s` (no wait once
    all are gone); return the leader's code. The tree: the group, the descendants taken first
    (children that left the group with setsid), and the orphans of the launch re-parented here
    (double-forked daemons)."""
    pgid = proc.pid
    token = _tokens.pop(proc.pid, "")
    try:
        descendants = psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        descendants = []
    orphans = _orphans_of(token) if token else []
    for orphan in list(orphans):
        with contextlib.suppress(psutil.Error):
            orphans += orphan.children(recursive=True)
    outside = [p for p in descendants + orphans if _pgid(p) != pgid]

    def leftovers() -> list[psutil.Process]:
        return live_group_members(pgid) + [p for p in descendants + orphans if _is_live(p)]

    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGTERM)
    for member in outside:  # not in the group: killpg does not reach them
        with contextlib.suppress(psutil.Error):
            member.terminate()
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if proc.poll() is not None and not leftovers():
            break
        time.sleep(0.02)
    for straggler in leftovers():
        with contextlib.suppress(psutil.Error):
            straggler.kill()
    group_keeper.release(pgid)
    for orphan in orphans:  # our children now: their exit status is ours to collect
        with contextlib.suppress(ChildProcessError, psutil.Error):
            orphan.wait(timeout=1)
    try:
        return proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        return None


def _pgid(proc: psutil.Process) -> int | None:
    try:
        return os.getpgid(proc.pid)
    except OSError:
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


def listening_addresses(pid: int) -> list[str]:
    """The TCP addresses the launch's processes (the leader, its group, its descendants) listen
    on: where a server that never answered its ready check is in fact waiting."""
    try:
        tree = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        tree = []
    found: set[str] = set()
    for proc in {*tree, *live_group_members(pid)}:
        try:
            connections = proc.net_connections(kind="tcp")
        except psutil.Error:
            continue
        for c in connections:
            if c.status == psutil.CONN_LISTEN and c.laddr:
                host = f"[{c.laddr.ip}]" if ":" in c.laddr.ip else c.laddr.ip
                found.add(f"{host}:{c.laddr.port}")
    return sorted(found)
