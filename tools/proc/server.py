"""Server lifecycle: launch a command in its own process group, wait until ready, stop it all.

If the agent is killed with SIGKILL (no `finally` runs), the group's keeper stops it
(tools/proc/group_keeper.py). Every launch also leaves a pidfile in the state folder until its group
is stopped: should the keeper have been killed too, the next start finds the pidfile of a server
whose owner is gone and stops that group.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psutil
from pydantic import BaseModel

from tools.errors import ToolError
from tools.folders import state_dir
from tools.proc.bounded_log import bound_file
from tools.proc.groups import (
    listening_addresses,
    live_group_members,
    start_group,
    stop_group,
)
from tools.server_http import server_client


class ServerError(ToolError):
    """The server did not come up; the message is one line and names the log."""


class ServerDied(ServerError):
    """The server came up, then ended while it was being measured."""


class ServerInfo(BaseModel):
    pid: int
    port: int
    base_url: str  # where the agent reaches it (through a tunnel for a remote node)
    node_url: str  # where it listens, on its own machine
    log_path: str
    ready_s: float


class ReapedServer(BaseModel):
    pid: int
    owner_pid: int
    argv: list[str]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _pid_dir() -> Path:
    return state_dir() / "servers"


def _write_pidfile(proc: subprocess.Popen, argv: list[str]) -> Path:
    path = _pid_dir() / f"{proc.pid}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    created = psutil.Process(proc.pid).create_time()
    path.write_text(
        json.dumps(
            {"pid": proc.pid, "owner_pid": os.getpid(), "argv": argv, "create_time": created}
        )
    )
    return path


def reap_stale_servers() -> list[ReapedServer]:
    """Stop the process groups of servers whose launching agent died without stopping them."""
    reaped = []
    for pidfile in sorted(_pid_dir().glob("*.json")):
        try:
            record = json.loads(pidfile.read_text())
            pid, owner = int(record["pid"]), int(record["owner_pid"])
        except (OSError, ValueError, KeyError, TypeError):
            pidfile.unlink(missing_ok=True)
            continue
        if psutil.pid_exists(owner) and owner != os.getpid():
            continue  # its agent is alive and will stop it
        # members of its group that started after it (a recycled pgid would be older)
        started = float(record.get("create_time", 0)) - 1.0
        survivors = [p for p in live_group_members(pid) if _created(p) >= started]
        for member in survivors:
            with contextlib.suppress(psutil.Error):
                member.kill()
        if survivors:
            reaped.append(ReapedServer(pid=pid, owner_pid=owner, argv=record.get("argv", [])))
        pidfile.unlink(missing_ok=True)
    return reaped


def _created(proc: psutil.Process) -> float:
    try:
        return proc.create_time()
    except psutil.Error:
        return 0.0


def _ready(
    base_url: str, ready: str, log_text: Callable[[], str], client: httpx.Client
) -> int | None:
    """200 once ready; else the HTTP status the path answered, or None (no answer yet, or a
    log line not yet printed)."""
    if ready.startswith("log:"):
        return 200 if re.search(ready[4:], log_text()) is not None else None
    try:
        with client.stream("GET", base_url + ready) as reply:  # its status, not its body
            return reply.status_code
    except httpx.HTTPError:
        return None


def exit_error(code: int, log_text: str, log_name: str, during: str) -> ServerError:
    """The server is gone: how it ended, its last log line, where its log is."""
    lines = log_text.strip().splitlines()
    how = (
        f"was killed by {signal.Signals(-code).name}"
        if code < 0 and -code in signal.valid_signals()
        else f"exited with code {code}"
    )
    kind = ServerError if during == "start-up" else ServerDied
    return kind(
        f"server {how} during {during}: {lines[-1] if lines else '(empty log)'} (log: {log_name})"
    )


def exit_code(poll: Callable[[], int | None], grace_s: float = 1.0) -> int | None:
    """The server's exit code if it has ended or ends within `grace_s` (a request error may
    come a moment before the process is reaped)."""
    deadline = time.monotonic() + grace_s
    while (code := poll()) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return code


def wait_ready(
    poll: Callable[[], int | None],
    base_url: str,
    ready: str,
    log_text: Callable[[], str],
    log_name: str,
    timeout_s: float,
    listening: Callable[[], list[str]] | None = None,
) -> float:
    """Seconds until `ready` holds; a one-line ServerError if the server exits or times out.

    `poll` gives the exit code once the server has exited; `log_text` reads its log so far;
    `listening`, where the server runs here, the addresses it listens on (said on a timeout).
    """
    start = time.monotonic()
    answered = ""  # the last HTTP status that was not 200: a misspelt path answers 404
    with server_client(2.0) as client:
        while True:
            status = _ready(base_url, ready, log_text, client)
            if status == 200:
                return time.monotonic() - start
            answered = f"; it answered {status}" if status else answered
            code = poll()
            if code is not None:
                raise exit_error(code, log_text(), log_name, "start-up")
            if time.monotonic() - start > timeout_s:
                where = _where_it_listens(base_url, listening) if not answered else ""
                raise ServerError(
                    f"server not ready after {timeout_s:g} s (waited for {ready}{answered}"
                    f"{where}; log: {log_name})"
                )
            time.sleep(0.05)


def _where_it_listens(base_url: str, listening: Callable[[], list[str]] | None) -> str:
    """A server that never answered: on another port (its command did not pass {port} on), on
    ::1 alone, or on none yet (still loading)."""
    if listening is None:
        return ""
    addresses, wanted = listening(), base_url.removeprefix("http://")
    if not addresses:
        return "; it listens on no TCP port yet"
    if wanted in addresses or f"0.0.0.0:{wanted.rpartition(':')[2]}" in addresses:
        return f"; it listens on {wanted} but gave no HTTP answer"
    shown = ", ".join(addresses[:4]) + (" ..." if len(addresses) > 4 else "")
    return f"; it listens on {shown}, not on {wanted}"


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


@contextmanager
def running_server(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    port: int,
    log_path: Path,
    ready: str = "/health",
    timeout_s: float = 900.0,
) -> Iterator[ServerInfo]:
    """Launch, wait until ready, yield, and stop the whole process group whatever happens."""
    if port_in_use(port):
        raise ServerError(f"port {port} is already in use on 127.0.0.1")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        proc = start_group(argv, cwd, {**os.environ, **env}, output=log)
    pidfile = _write_pidfile(proc, argv)
    base_url = f"http://127.0.0.1:{port}"
    try:
        ready_s = wait_ready(
            proc.poll,
            base_url,
            ready,
            lambda: _read(log_path),
            str(log_path),
            timeout_s,
            listening=lambda: listening_addresses(proc.pid),
        )
        try:
            yield ServerInfo(
                pid=proc.pid,
                port=port,
                base_url=base_url,
                node_url=base_url,
                log_path=str(log_path),
                ready_s=ready_s,
            )
        except Exception:
            # a reset connection is the symptom; the server's own end is the news
            code = exit_code(proc.poll)
            if code is not None:
                raise exit_error(code, _read(log_path), str(log_path), "the benchmark") from None
            raise
    finally:
        stop_group(proc)
        pidfile.unlink(missing_ok=True)
        bound_file(log_path)
