"""Files read on the node over SFTP: a device or a folder named where a file was expected is
one line, never an endless read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.node.sshd import Sshd
from tools.bounded_read import NotAFile
from tools.config import HostSection
from tools.node.ssh_host import HostError, SSHHost, resolve


def test_a_device_or_a_folder_on_the_node_is_refused_by_what_it_is(
    sshd: Sshd, tmp_path: Path
) -> None:
    host = SSHHost(HostSection(ssh=sshd.spec, identity=sshd.key, known_hosts=sshd.known_hosts))
    try:
        (tmp_path / "results.jsonl").write_text('{"x": 1}\n')
        assert host.read_text(str(tmp_path / "results.jsonl")) == '{"x": 1}\n'
        with pytest.raises(NotAFile, match="/dev/zero on .* is a device, not a regular file"):
            host.read_text("/dev/zero")  # read until memory ran out
        with pytest.raises(NotAFile, match="is a folder, not a regular file"):
            host.read_text(str(tmp_path))
    finally:
        host.close()


@pytest.mark.parametrize(
    ("identity", "says"), [("/dev/zero", "is not a regular file"), ("/no/such/key", "not found")]
)
def test_an_identity_that_is_no_key_file_says_which(identity: str, says: str) -> None:
    """/dev/zero was "not found"."""
    with pytest.raises(HostError, match=f"identity file {identity} {says}"):
        resolve(HostSection(ssh="u@127.0.0.1:22", identity=identity))
