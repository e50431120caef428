"""A real OpenSSH server on 127.0.0.1 (and ::1) for the SSH tests: generated host and user keys."""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from tools.proc.server import free_port

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
SFTP_SERVER = "/usr/lib/openssh/sftp-server"  # openssh-server's, where Debian puts it


class Sshd(BaseModel):
    pid: int  # the listening sshd; each connection is served by its children
    port: int
    user: str
    key: str  # authorized
    wrong_key: str  # a valid key the server does not know
    known_hosts: str
    folder: str

    @property
    def tmp(self) -> str:
        """The TMPDIR of its sessions."""
        return f"{self.folder}/node-tmp"

    @property
    def spec(self) -> str:
        return f"{self.user}@127.0.0.1:{self.port}"


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    yield from _sshd(tmp_path_factory, forwarding=True)


@pytest.fixture(scope="session")
def sshd_without_forwarding(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    """As some clusters' nodes are: AllowTcpForwarding no, a PYTHONPATH set for sessions, and a
    greeting before every command's output."""
    yield from _sshd(tmp_path_factory, forwarding=False)


def _sshd(tmp_path_factory: pytest.TempPathFactory, forwarding: bool) -> Iterator[Sshd]:
    if not Path(SSHD).exists():  # .ci/run installs openssh-server: in CI this never happens
        pytest.fail("sshd not found: install openssh-server (as .ci/run does)")
    folder = tmp_path_factory.mktemp("sshd")
    for name in ("host_key", "user_key", "wrong_key"):
        _keygen(folder / name)
    shutil.copy(folder / "user_key.pub", folder / "authorized_keys")
    # the node's temporary folder is this server's own: what its sessions run (the run folders
    # of the supervisor) is told apart from another test's, run beside it by the other worker
    (folder / "node-tmp").mkdir()
    # a node that greets, as ~/.bashrc or a login script often does on a cluster: text before
    # every command's own output, on stdout and stderr (SFTP is served without it, as it must)
    greeting = folder / "greeting.sh"
    greeting.write_text(f"""#!/bin/sh
case "$SSH_ORIGINAL_COMMAND" in internal-sftp) exec {SFTP_SERVER};; esac
echo "Welcome to the node ($(date))"; echo "Your quota: 80 % used" >&2
exec bash -c "$SSH_ORIGINAL_COMMAND"
""")
    greeting.chmod(0o755)
    node_only = f"ForceCommand {greeting}\n" if not forwarding else ""
    port = free_port()
    (folder / "sshd_config").write_text(f"""\
Port {port}
ListenAddress 127.0.0.1
ListenAddress [::1]
HostKey {folder}/host_key
PidFile {folder}/sshd.pid
AuthorizedKeysFile {folder}/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowTcpForwarding {"yes" if forwarding else "no"}
SetEnv TMPDIR={folder}/node-tmp{"" if forwarding else f" PYTHONPATH={folder}/node-site"}
AcceptEnv GIT_PROTOCOL
Subsystem sftp internal-sftp
LogLevel {"ERROR" if forwarding else "INFO"}
{node_only}""")
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(exist_ok=True)  # its privilege-separation folder
    log = open(folder / "sshd.log", "wb")  # noqa: SIM115 (held for the server's life)
    proc = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(folder / "sshd_config")], stdout=log, stderr=subprocess.STDOUT
    )
    deadline = time.monotonic() + 10
    while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
        if proc.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"sshd did not start: {(folder / 'sshd.log').read_text()}")
        time.sleep(0.05)
    host_key = (folder / "host_key.pub").read_text().split()
    (folder / "known_hosts").write_text(
        "".join(f"[{ip}]:{port} {host_key[0]} {host_key[1]}\n" for ip in ("127.0.0.1", "::1"))
    )
    try:
        yield Sshd(
            pid=proc.pid,
            port=port,
            user=getpass.getuser(),
            key=str(folder / "user_key"),
            wrong_key=str(folder / "wrong_key"),
            known_hosts=str(folder / "known_hosts"),
            folder=str(folder),
        )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()
