"""A local port forwarded to a port on the node (like `ssh -L`), over the open SSH connection.

The server on the node listens on its own 127.0.0.1; the agent's HTTP benchmark and readiness
checks reach it through this tunnel. Each accepted connection is one direct-tcpip channel, or,
where the node's sshd refuses port forwarding (AllowTcpForwarding no), one exec channel running
`remote_helper.py relay PORT` there. Relays are session channels, so sshd's MaxSessions (10 by
default, one of them the supervisor's) caps how many connections can be open at once.
"""

from __future__ import annotations

import contextlib
import shlex
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import paramiko

from tools.node.remote_helper import pump
from tools.node.ssh_host import SSHHost

PROHIBITED = paramiko.common.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED


def _from_channel(channel: paramiko.Channel) -> bytes | None:
    """The connection's next bytes (None: none yet). select() wakes for stderr as well, where
    the node's login shell greets a relay: left unread, recv() waited for bytes that never
    came, and the request waiting to go out never went."""
    if channel.recv_stderr_ready():
        channel.recv_stderr(65536)  # the greeting, or the relay's own complaint: not the bytes
        return None
    return channel.recv(65536)


def _pump(client: socket.socket, channel: paramiko.Channel, first: bytes) -> None:
    try:
        client.sendall(first)  # what the relay sent with the shell's greeting
        pump(
            (client, lambda: client.recv(65536), client.sendall),
            (channel, lambda: _from_channel(channel), channel.sendall),
        )
    except (OSError, EOFError):
        pass
    finally:
        channel.close()
        client.close()


class _Channels:
    """One channel per connection: direct-tcpip, or a relay once sshd has refused that."""

    def __init__(self, host: SSHHost, remote_port: int) -> None:
        self.host, self.remote_port = host, remote_port
        self.relay = False

    def open(self, peer: tuple[str, int]) -> tuple[paramiko.Channel, bytes]:
        """The channel, and what it already sent."""
        transport = self.host.client.get_transport()
        if not self.relay:
            try:
                target = ("127.0.0.1", self.remote_port)
                return transport.open_channel("direct-tcpip", target, peer), b""
            except paramiko.ChannelException as e:
                if e.code != PROHIBITED:
                    raise
                self.relay = True
        return self.host.start(
            f"{shlex.quote(self.host.section.python)} "
            f"{shlex.quote(self.host.helper())} relay {self.remote_port}"
        )


@contextmanager
def forwarded_port(host: SSHHost, remote_port: int) -> Iterator[int]:
    """A local port whose connections reach 127.0.0.1:`remote_port` on the node."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(32)
    listener.settimeout(0.2)
    stop = threading.Event()
    channels = _Channels(host, remote_port)

    def accept() -> None:
        while not stop.is_set():
            try:
                client, peer = listener.accept()
            except (TimeoutError, OSError):
                continue
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                channel, first = channels.open(peer)
            except Exception:  # refused or dropped: the client sees a closed connection
                client.close()
                continue
            threading.Thread(target=_pump, args=(client, channel, first), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=2.0)
        with contextlib.suppress(OSError):
            listener.close()
