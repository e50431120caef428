"""A process group that dies with its owner, however the owner dies. Standard library only.

`keep(pgid)` starts `python group_keeper.py PGID` in a session of its own, its stdin the read
end of a pipe whose write end only the owner holds. The kernel closes that end when the owner
exits in any way, SIGKILL included; the keeper then reads EOF and stops the group. An owner
that stopped the group itself says so with one byte first (`release(pgid)`), and the keeper
leaves quietly. This file also runs on a remote node, beside remote_helper.py, so it imports
nothing outside the standard library.

What a keeper cannot cover: a process that left the group (setsid), and the keeper itself
being killed. tools/proc/server.py's pidfiles cover both on this machine at the next start.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

RELEASED = b"r"
GRACE_S = 5.0


def _group_alive(pgid: int) -> bool:
    """Any process of group `pgid` still runs (a zombie is dead: only its exit status is left)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False


def stop_pgid(pgid: int, leader: subprocess.Popen | None = None) -> None:
    """SIGTERM to the whole group, SIGKILL to what is left after GRACE_S; reap the leader."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + GRACE_S
        while time.monotonic() < deadline:
            if leader is not None:
                leader.poll()
            if not _group_alive(pgid):
                break
            time.sleep(0.02)
        else:
            continue
        break
    if leader is not None:
        leader.poll()


class Keeper:
    """The owner's end of one keeper: die without `release` and the group is stopped."""

    def __init__(self, pgid: int) -> None:
        read_end, self._write_end = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-S", os.path.abspath(__file__), str(pgid)],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
                start_new_session=True,
            )  # a signal to the owner's group must not reach it
        finally:
            os.close(read_end)

    def release(self) -> None:
        """The owner has stopped the group itself: the keeper exits without touching it."""
        if self._write_end < 0:
            return
        with contextlib.suppress(OSError):  # the keeper is gone already
            os.write(self._write_end, RELEASED)
        os.close(self._write_end)
        self._write_end = -1
        try:
            self.proc.wait(timeout=GRACE_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_kept: dict[int, Keeper] = {}  # this process's keepers, by the group they keep


def keep(pgid: int) -> None:
    _kept[pgid] = Keeper(pgid)


def release(pgid: int) -> None:
    """Call after stopping group `pgid`: its keeper leaves without touching it."""
    keeper = _kept.pop(pgid, None)
    if keeper is not None:
        keeper.release()


def main() -> int:
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)  # only its owner's end decides
    if os.read(0, 1) != RELEASED:  # EOF: the owner died without stopping the group
        stop_pgid(int(sys.argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
