"""The agent's end of the node's supervisor (tools/node/remote_helper.py `supervise`).

One supervisor holds one experiment's resources on the node. This side sends JSON requests and
a heartbeat every HEARTBEAT_S; if the agent dies or the connection drops, the supervisor sees EOF
(or silence) and stops the server group, removes the worktree and the run folder. Closing
normally waits until it has done so.
"""

from __future__ import annotations

import json
import shlex
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tools.errors import ToolError
from tools.node.ssh_host import HostLost, SSHHost

HEARTBEAT_S = 2.0


class RemoteSupervisor:
    def __init__(self, host: SSHHost, repo: str) -> None:
        self.host = host
        self.label = host.endpoint.label
        helper = host.helper()
        command = (
            f"DEBUG_AGENT_REPO={shlex.quote(repo)} {shlex.quote(host.section.python)} "
            f"{shlex.quote(helper)} supervise"
        )
        self.channel, self.buffer = host.start(command)  # past the login shell's greeting
        self.lock = threading.Lock()  # one request at a time
        self.send_lock = threading.Lock()  # a heartbeat never splits a request line
        self.closed = threading.Event()
        hello = self._read_line(timeout_s=60.0)
        self.run_dir: str = hello["run_dir"]
        self.pid: int = hello["pid"]
        self.pythonpath: str = hello.get("pythonpath", "")  # what a launch there inherits
        self._beat = threading.Thread(target=self._heartbeat, daemon=True)
        self._beat.start()

    def _heartbeat(self) -> None:
        while not self.closed.wait(HEARTBEAT_S):
            try:
                with self.send_lock:
                    self.channel.sendall(b"\n")
            except (OSError, EOFError):
                return

    def _read_line(self, timeout_s: float) -> dict:
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self.buffer:
            if self.channel.recv_ready():
                chunk = self.channel.recv(65536)
            elif self.channel.exit_status_ready() or self.channel.closed or not self.host.alive:
                chunk = b""
            elif time.monotonic() > deadline:
                raise HostLost(f"the supervisor on {self.label} did not answer in {timeout_s:g} s")
            else:
                time.sleep(0.01)
                continue
            if not chunk:
                error = self.channel.recv_stderr(4096).decode(errors="replace").strip()
                raise HostLost(
                    f"connection to {self.label} lost"
                    + (f": {error.splitlines()[-1]}" if error else "")
                )
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def call(self, op: str, wait_s: float = 120.0, **args) -> dict:
        """One request, one reply; a failed op is a ToolError, a dropped link is HostLost."""
        with self.lock:
            try:
                with self.send_lock:
                    self.channel.sendall((json.dumps({"op": op, **args}) + "\n").encode())
            except (OSError, EOFError):
                raise HostLost(f"connection to {self.label} lost") from None
            reply = self._read_line(wait_s)
        if not reply.pop("ok", False):
            raise ToolError(f"on {self.host.endpoint.alias}: {op} failed: {reply.get('error')}")
        return reply

    def close(self) -> None:
        """Ask the supervisor to release everything and wait until it has."""
        self.closed.set()
        try:
            self.call("bye", wait_s=30.0)
        except (ToolError, OSError, EOFError):
            pass  # it cleans up by itself when the channel goes
        finally:
            self.channel.close()


@contextmanager
def supervised(host: SSHHost, repo: str) -> Iterator[RemoteSupervisor]:
    supervisor = RemoteSupervisor(host, repo)
    try:
        yield supervisor
    finally:
        supervisor.close()
