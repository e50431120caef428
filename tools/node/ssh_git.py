"""`GIT_SSH_COMMAND` for fetching from the node: git's ssh transport over our paramiko link.

git runs `<this> [-o SendEnv=GIT_PROTOCOL] [-p PORT] HOST 'git-upload-pack ...'`; the
connection settings come from the [host] section in DEBUG_AGENT_SSH_HOST, not from the args.
"""

from __future__ import annotations

import os
import shlex
import sys
import threading

from tools.config import HostSection
from tools.errors import ToolError
from tools.node.ssh_host import after_mark, connect

HOST_VAR = "DEBUG_AGENT_SSH_HOST"


def main() -> int:
    try:
        host = connect(HostSection.model_validate_json(os.environ[HOST_VAR]))
        protocol = os.environ.get("GIT_PROTOCOL")  # git's v2 protocol, as sshd's SendEnv gives it
        prefix = f"GIT_PROTOCOL={shlex.quote(protocol)} " if protocol else ""
        channel, first = host.start(prefix + sys.argv[-1])
    except (ToolError, OSError, EOFError, KeyError) as e:
        sys.stderr.write(f"debug-agent ssh: {e}\n")
        return 255

    def send() -> None:
        while data := os.read(0, 65536):
            channel.sendall(data)
        channel.shutdown_write()

    threading.Thread(target=send, daemon=True).start()
    data = first  # what came with the greeting: git may wait for it before it says more
    while True:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        if not (data := channel.recv(65536)):
            break
    sys.stderr.buffer.write(after_mark(channel.recv_stderr(1 << 20)))
    return channel.recv_exit_status()


if __name__ == "__main__":
    sys.exit(main())
