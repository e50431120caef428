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


def _pump(client: socket.socket, channel: paramiko.Channel) -> None:
    try:
        pump(
            (client, lambda: client.recv(65536), client.sendall),
            (channel, lambda: channel.recv(65536), channel.sendall),
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

    def open(self, peer: tuple[str, int]) -> paramiko.Channel:
        transport = self.host.client.get_transport()
        if not self.relay:
            try:
                return transport.open_channel("direct-tcpip", ("127.0.0.1", self.remote_port), peer)
            except paramiko.ChannelException as e:
                if e.code != PROHIBITED:
                    raise
                self.relay = True
        channel = transport.open_session()
        channel.exec_command(
            f"{shlex.quote(self.host.section.python)} "
            f"{shlex.quote(self.host.helper())} relay {self.remote_port}"
        )
        return channel


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
                channel = channels.open(peer)
            except Exception:  # refused or dropped: the client sees a closed connection
                client.close()
                continue
            threading.Thread(target=_pump, args=(client, channel), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=2.0)
        with contextlib.suppress(OSError):
            listener.close()
