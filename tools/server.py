"""Server lifecycle: launch a command in its own process group, wait until ready, stop it all."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from pydantic import BaseModel

from tools.errors import ToolError
from tools.procs import start_group, stop_group


class ServerError(ToolError):
    """The server did not come up; the message is one line, the log path is attached."""

    def __init__(self, message: str, log_path: Path | None = None) -> None:
        super().__init__(message)
        self.log_path = log_path


class ServerInfo(BaseModel):
    pid: int
    port: int
    base_url: str
    log_path: str
    ready_s: float


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def log_tail(path: Path, lines: int = 12) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _ready(base_url: str, ready: str, log_path: Path, client: httpx.Client) -> bool:
    if ready.startswith("log:"):
        try:
            return re.search(ready[4:], log_path.read_text(errors="replace")) is not None
        except OSError:
            return False
    try:
        return client.get(base_url + ready).status_code == 200
    except httpx.HTTPError:
        return False


def wait_ready(proc: subprocess.Popen, base_url: str, ready: str, log_path: Path,
               timeout_s: float) -> float:
    start = time.monotonic()
    with httpx.Client(timeout=2.0) as client:
        while True:
            if _ready(base_url, ready, log_path, client):
                return time.monotonic() - start
            code = proc.poll()
            if code is not None:
                tail = log_tail(log_path, 1).strip()
                raise ServerError(f"server exited with code {code} during start-up: {tail}",
                                  log_path)
            if time.monotonic() - start > timeout_s:
                raise ServerError(f"server not ready after {timeout_s:g} s "
                                  f"(waited for {ready})", log_path)
            time.sleep(0.05)


@contextmanager
def running_server(argv: list[str], cwd: Path, env: dict[str, str], port: int, log_path: Path,
                   ready: str = "/health", timeout_s: float = 900.0) -> Iterator[ServerInfo]:
    """Launch, wait until ready, yield, and stop the whole process group whatever happens."""
    if port_in_use(port):
        raise ServerError(f"port {port} is already in use on 127.0.0.1")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    full_env = {**os.environ, **env}
    with open(log_path, "ab") as log:
        proc = start_group(argv, cwd, full_env, output=log)
    base_url = f"http://127.0.0.1:{port}"
    try:
        ready_s = wait_ready(proc, base_url, ready, log_path, timeout_s)
        yield ServerInfo(pid=proc.pid, port=port, base_url=base_url, log_path=str(log_path),
                         ready_s=ready_s)
    finally:
        stop_group(proc)
