"""Files read on the node over SFTP: a device or a folder named where a file was expected is
one line, never an endless read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.node.sshd import Sshd
from tools.bounded_read import NotAFile
from tools.config import HostSection
from tools.node.ssh_host import SSHHost


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
