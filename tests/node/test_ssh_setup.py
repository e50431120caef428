"""A user's SSH setup as it is found, against a real sshd (tests/node/sshd.py): an
~/.ssh/config that paramiko cannot parse, keys that are not keys or need a passphrase, a
known_hosts file of garbage. Each is one line that names the file (paramiko's own errors
were internal errors), and where OpenSSH would go on, so do we."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.node.sshd import Sshd
from tools.config import HostSection
from tools.node.ssh_host import HostError, SSHHost

ALIAS = "gpu-node"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))  # Path.home() reads it: ~/.ssh/config is ours
    (tmp_path / ".ssh").mkdir()
    return tmp_path


def _write_config(home: Path, sshd: Sshd, *identities: str) -> None:
    lines = "".join(f"  IdentityFile {key}\n" for key in identities)
    (home / ".ssh" / "config").write_bytes(
        f"Host {ALIAS}\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
        f"{lines}  UserKnownHostsFile {sshd.known_hosts}\n".encode()
    )


def _refused(section: HostSection) -> str:
    with pytest.raises(HostError) as refused:
        SSHHost(section).close()  # a connection of its own: connect() keeps one per section
    assert "\n" not in str(refused.value)
    return str(refused.value)


def test_identity_files_of_the_config_that_are_no_keys_are_passed_over(
    sshd: Sshd, home: Path
) -> None:
    """OpenSSH tries each IdentityFile it can load: a missing one and one of random bytes
    before the user's key made paramiko fail ("cannot reach", a UnicodeDecodeError)."""
    garbage = home / "garbage_key"
    garbage.write_bytes(bytes(range(256)) * 4)
    _write_config(home, sshd, str(home / "missing_key"), str(garbage), sshd.key)
    host = SSHHost(HostSection(ssh=ALIAS))
    assert host.run("echo up")[1].strip() == "up"
    host.close()


def test_a_named_identity_that_is_no_key_or_needs_a_passphrase(sshd: Sshd, home: Path) -> None:
    _write_config(home, sshd)
    garbage = home / "garbage_key"
    garbage.write_bytes(bytes(range(256)) * 4)
    assert _refused(HostSection(ssh=ALIAS, identity=str(garbage))) == (
        f"[host] identity file {garbage} is not a private key"
    )
    public = _refused(HostSection(ssh=ALIAS, identity=sshd.key + ".pub"))
    assert public.endswith("is not a private key: the private key is the file without .pub")
    locked = home / "locked_key"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "passphrase", "-f", str(locked)], check=True
    )
    needs = _refused(HostSection(ssh=ALIAS, identity=str(locked)))
    assert "needs its passphrase" in needs and "ssh-add" in needs, needs


def test_an_ssh_config_or_known_hosts_that_cannot_be_read(sshd: Sshd, home: Path) -> None:
    config = home / ".ssh" / "config"
    config.write_text(f"Host {ALIAS}\n  HostName 127.0.0.1\n  Port\n")
    assert _refused(HostSection(ssh=ALIAS)) == "~/.ssh/config cannot be read: Unparsable line Port"
    config.write_bytes(f"Host {ALIAS}\n  HostName \xff127.0.0.1\n".encode("latin-1"))
    assert (
        _refused(HostSection(ssh=ALIAS)) == "~/.ssh/config is not UTF-8 text: OpenSSH's config is"
    )
    _write_config(home, sshd, sshd.key)
    known = home / "known_hosts"
    known.write_bytes(b"garbage \xff\xfe line\n")
    refused = _refused(HostSection(ssh=ALIAS, known_hosts=str(known)))
    assert refused == f"known hosts file {known} is not UTF-8 text"


def test_an_ipv6_node_in_brackets_with_its_port(sshd: Sshd, home: Path) -> None:
    """`user@[::1]:port`, as ssh:// URLs write it: `[` was taken for the host name."""
    section = HostSection(
        ssh=f"{sshd.user}@[::1]:{sshd.port}", identity=sshd.key, known_hosts=sshd.known_hosts
    )
    host = SSHHost(section)
    assert host.run("echo up")[1].strip() == "up"
    host.close()
    unclosed = _refused(HostSection(ssh=f"{sshd.user}@[::1:{sshd.port}", identity=sshd.key))
    assert "expected user@host[:port] ([IPv6]:port)" in unclosed
