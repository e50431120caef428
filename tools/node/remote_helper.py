"""The part of debug-agent that runs on the GPU node, started over SSH. Standard library only.

`supervise` holds one experiment's resources on the node (a scratch worktree, a run folder,
the server's process group, a running bench) and releases all of them when the connection goes:
at EOF on stdin (the SSH channel closed, or the agent died and its TCP connection with it), or
when no heartbeat arrived for DEAD_S seconds (a connection that hangs half-open). Requests and
replies are JSON lines; an empty line is a heartbeat. A supervisor killed on the node (SIGKILL)
runs no cleanup: a keeper per process group (group_keeper.py, uploaded beside this file) stops
the server and the bench, and the next supervisor removes the worktree it left.

`relay PORT` carries one TCP connection to the node's 127.0.0.1:PORT over stdin and stdout.

`state REPO GOOD` prints the good commit and the patch from it to the working tree, untracked
files included. It diffs through a temporary copy of the index: the user's index is not written.
"""

from __future__ import annotations

import io
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any, cast

try:  # on the node they are uploaded beside this file
    import group_keeper
    import hidden_changes
    import temp_folders
except ModuleNotFoundError:
    from tools import temp_folders
    from tools.proc import group_keeper
    from tools.repo import hidden_changes

DEAD_S = 20.0
LOCK_REASON = "debug-agent node pid "


class Gone(Exception):
    """The agent's side of the connection is gone."""


def _git(repo: str, *args: str, env: dict | None = None, stdin: bytes | None = None) -> str:
    done = subprocess.run(["git", "-C", repo, *args], input=stdin, capture_output=True, env=env)
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        raise RuntimeError((said or ["git failed"])[-1])
    # bytes as they are: a path that is not UTF-8 survives, a CRLF file's patch keeps its CRs
    return done.stdout.decode(errors="surrogateescape")


def _start(argv: list[str] | str, cwd: str, env: dict, output: int) -> subprocess.Popen:
    """A process group of its own, with a keeper that stops it if this supervisor is killed."""
    proc = subprocess.Popen(
        argv,
        shell=isinstance(argv, str),
        cwd=cwd,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    group_keeper.keep(proc.pid)
    return proc


def stop_group(proc: subprocess.Popen) -> None:
    group_keeper.stop_pgid(proc.pid, proc)
    group_keeper.release(proc.pid)


def _environ(pid: int) -> list[dict]:
    """The process tree under `pid`: each process's command line and start environment."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop(0)
        try:
            with open(f"/proc/{current}/cmdline", "rb") as f:
                cmdline = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
            with open(f"/proc/{current}/environ", "rb") as f:
                pairs = [e.decode(errors="replace") for e in f.read().split(b"\0") if b"=" in e]
            with open(f"/proc/{current}/stat") as f:
                head, rest = f.read().rsplit(")", 1)
            if rest.split()[0] == "Z":
                continue
        except OSError:
            continue
        found.append(
            {
                "pid": current,
                "ppid": int(rest.split()[1]),
                "name": head.split("(", 1)[1],
                "cmdline": cmdline,
                "env": dict(p.split("=", 1) for p in pairs),
                "exe": _exe(current),
            }
        )
        todo.extend(sorted(children.get(current, [])))
    return found


def _exe(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None


class Supervisor:
    def __init__(self) -> None:
        self.buffer = b""
        self.last_seen = time.monotonic()
        self.pending: list[dict] = []
        self.server: subprocess.Popen | None = None
        self.worktree: tuple[str, str] | None = None  # (repo, path)
        self.run_dir = str(temp_folders.temp_folder("run"))  # a killed helper's: removed later

    def pump(self, timeout: float) -> None:
        """Read what the agent sent; raise Gone at EOF or after DEAD_S without a byte."""
        ready, _, _ = select.select([sys.stdin.fileno()], [], [], timeout)
        if ready:
            data = os.read(sys.stdin.fileno(), 65536)
            if not data:
                raise Gone
            self.last_seen = time.monotonic()
            self.buffer += data
            *lines, self.buffer = self.buffer.split(b"\n")
            self.pending.extend(json.loads(line) for line in lines if line.strip())
        elif time.monotonic() - self.last_seen > DEAD_S:
            raise Gone

    def reply(self, message: dict) -> None:
        try:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()
        except OSError:  # nobody listens any more
            raise Gone from None

    def handle(self, request: dict) -> dict:
        op = request["op"]
        if op == "worktree":
            repo, path = request["repo"], os.path.join(self.run_dir, "tree")
            _git(
                repo,
                "worktree",
                "add",
                "--detach",
                "--lock",
                "--reason",
                f"{LOCK_REASON}{os.getpid()}",
                path,
                request["sha"],
            )
            self.worktree = (repo, path)
            if request.get("patch"):
                patch = os.path.join(self.run_dir, "state.patch")
                with open(patch, "w") as f:
                    f.write(request["patch"])
                # --index: a submodule's pointer lives only there
                _git(path, "apply", "--index", "--whitespace=nowarn", patch)
            return {"path": path}
        if op == "port":
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                return {"port": s.getsockname()[1]}
        if op == "launch":
            with open(os.path.join(self.run_dir, request["log"]), "ab") as log:
                self.server = _start(request["argv"], request["cwd"], request["env"], log.fileno())
            return {"pid": self.server.pid}
        if op == "poll":
            return {"exit": self.server.poll() if self.server else None}
        if op == "stop":
            if self.server:
                stop_group(self.server)
                self.server = None
            return {"stopped": True}
        if op == "environ":
            return {"processes": _environ(int(request["pid"]))}
        if op == "shell":
            return self.shell(request)
        if op == "bye":
            return {}
        raise RuntimeError(f"unknown op {op!r}")

    def shell(self, request: dict) -> dict:
        proc = _start(request["command"], request["cwd"], request["env"], subprocess.PIPE)
        chunks, deadline = [], time.monotonic() + float(request["timeout_s"])
        try:
            out = proc.stdout
            if out is None:  # never: _start was given PIPE
                raise RuntimeError("the shell command has no output pipe")
            os.set_blocking(out.fileno(), False)
            while True:  # keep listening to the agent while the command runs
                self.pump(0.05)
                chunk = out.read()
                if chunk:
                    chunks.append(chunk)
                if proc.poll() is not None:
                    chunks.append(out.read() or b"")
                    return {
                        "code": proc.returncode,
                        "output": b"".join(chunks).decode(errors="replace"),
                        "timed_out": False,
                    }
                if time.monotonic() > deadline:
                    return {
                        "code": None,
                        "output": b"".join(chunks).decode(errors="replace"),
                        "timed_out": True,
                    }
        finally:
            stop_group(proc)

    def cleanup(self) -> None:
        if self.server:
            stop_group(self.server)
        if self.worktree:
            repo, path = self.worktree
            subprocess.run(
                ["git", "-C", repo, "worktree", "remove", "--force", "--force", path],
                capture_output=True,
            )
        shutil.rmtree(self.run_dir, ignore_errors=True)

    def serve(self) -> None:
        signal.signal(signal.SIGHUP, lambda *_: sys.exit(1))
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
        try:
            _reap_worktrees_of_dead_supervisors()
            self.reply(
                {
                    "run_dir": self.run_dir,
                    "pid": os.getpid(),
                    "pythonpath": os.environ.get("PYTHONPATH", ""),
                }
            )
            while True:
                if not self.pending:
                    self.pump(0.5)
                    continue
                request = self.pending.pop(0)
                try:
                    self.reply({"ok": True, **self.handle(request)})
                except (OSError, RuntimeError, ValueError, KeyError) as e:
                    self.reply({"ok": False, "error": str(e)})
                if request["op"] == "bye":
                    return
        except (Gone, SystemExit):
            pass
        finally:
            self.cleanup()


def _reap_worktrees_of_dead_supervisors() -> None:
    """Worktrees locked by a supervisor that is gone (killed on the node) are removed."""
    repo = os.environ.get("DEBUG_AGENT_REPO")
    if not repo:
        return
    try:
        listing = _git(repo, "worktree", "list", "--porcelain")
    except (RuntimeError, OSError):
        return
    path = None
    for line in listing.splitlines():
        if line.startswith("worktree "):
            path = line[len("worktree ") :]
        elif line.startswith("locked " + LOCK_REASON) and path:
            pid = line[len("locked " + LOCK_REASON) :].strip()
            if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                subprocess.run(
                    ["git", "-C", repo, "worktree", "remove", "--force", "--force", path],
                    capture_output=True,
                )
                shutil.rmtree(path, ignore_errors=True)


def state(repo: str, good: str) -> dict:
    if not os.path.isdir(repo):
        raise RuntimeError(f"no folder {repo}")
    try:
        root = _git(repo, "rev-parse", "--show-toplevel").strip()
    except RuntimeError:
        raise RuntimeError(f"{repo} is not a git repository") from None
    try:
        sha = _git(root, "rev-parse", "--verify", "--quiet", good + "^{commit}").strip()
    except RuntimeError:
        raise RuntimeError(f"good ref {good!r} not found in {root}") from None
    index = _git(root, "rev-parse", "--git-path", "index").strip()
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "index")
        if os.path.exists(os.path.join(root, index)):
            # copy2 keeps the mtime git needs to see a same-size change made within the second
            # the index was written
            shutil.copy2(os.path.join(root, index), copy)
        env = {**os.environ, "GIT_INDEX_FILE": copy}
        listing = _git(root, *hidden_changes.LISTING, env=env)
        for flag, paths in hidden_changes.hidden_changes(listing, root).items():
            names = hidden_changes.nul_separated(paths)
            _git(root, "update-index", flag, "-z", "--stdin", env=env, stdin=names)
        _git(root, "add", "--intent-to-add", "--all", env=env)
        patch = _git(root, "diff", "--binary", sha, env=env)
    return {"root": root, "sha": sha, "patch": patch}


def pump(
    one: tuple[Any, Callable[[], bytes | None], Callable[[bytes], None]],
    other: tuple[Any, Callable[[], bytes | None], Callable[[bytes], None]],
) -> None:
    """Copy bytes both ways between two ends until either one closes.

    An end is something select() takes, how to read from it (b"": closed; None: nothing to
    pass on this time), and how to write to it.
    """
    while True:
        ready, _, _ = select.select([one[0], other[0]], [], [])
        for source, target in ((one, other), (other, one)):
            if source[0] in ready:
                data = source[1]()
                if data is None:
                    continue
                if not data:
                    return
                target[2](data)


def relay(port: int) -> int:
    """Bytes between stdin/stdout and 127.0.0.1:`port` on this node.

    The agent's tunnel uses one of these per connection when the node's sshd refuses port
    forwarding (AllowTcpForwarding no): an exec channel is allowed where direct-tcpip is not.
    """
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError:
        return 1  # nothing listens yet: the agent sees a closed connection
    sock.settimeout(None)
    # typeshed types sys.stdin.buffer as BinaryIO; it is a BufferedReader, whose raw file
    # returns what has arrived instead of waiting for a full buffer
    stdin, stdout = cast(io.BufferedReader, sys.stdin.buffer).raw, sys.stdout.buffer

    def write_out(data: bytes) -> None:
        stdout.write(data)
        stdout.flush()

    try:
        pump(
            (stdin, lambda: stdin.read(65536), write_out),
            (sock, lambda: sock.recv(65536), sock.sendall),
        )
    except OSError:
        pass
    finally:
        sock.close()
    return 0


def main() -> int:
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "supervise":
        Supervisor().serve()
        return 0
    if command == "state" and len(sys.argv) == 4:
        try:
            print(json.dumps({"ok": True, **state(sys.argv[2], sys.argv[3])}))
        except (RuntimeError, OSError) as e:
            print(json.dumps({"ok": False, "error": str(e)}))
        return 0
    if command == "environ" and len(sys.argv) == 3:
        print(json.dumps({"ok": True, "processes": _environ(int(sys.argv[2]))}))
        return 0
    if command == "relay" and len(sys.argv) == 3:
        return relay(int(sys.argv[2]))
    sys.stderr.write(
        "usage: remote_helper.py supervise | state REPO GOOD | environ PID | relay PORT\n"
    )
    return 2


if __name__ == "__main__":
    sys.exit(main())
