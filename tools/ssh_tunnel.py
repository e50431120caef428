"""A local port forwarded to a port on the node (like `ssh -L`), over the open SSH connection.

The server on the node listens on its own 127.0.0.1; the agent's HTTP benchmark and readiness
checks reach it through this tunnel. Each accepted connection is one direct-tcpip channel.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from tools.ssh_host import SSHHost


def _pump(client: socket.socket, channel) -> None:
    try:
        while True:
            ready, _, _ = select.select([client, channel], [], [], 1.0)
            if client in ready:
                data = client.recv(65536)
                if not data:
                    break
                channel.sendall(data)
            if channel in ready:
                data = channel.recv(65536)
                if not data:
                    break
                client.sendall(data)
    except (OSError, EOFError):
        pass
    finally:
        channel.close()
        client.close()


@contextmanager
def forwarded_port(host: SSHHost, remote_port: int) -> Iterator[int]:
    """A local port whose connections reach 127.0.0.1:`remote_port` on the node."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(32)
    listener.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                client, peer = listener.accept()
            except (TimeoutError, OSError):
                continue
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                transport = host.client.get_transport()
                channel = transport.open_channel("direct-tcpip", ("127.0.0.1", remote_port),
                                                 peer)
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
