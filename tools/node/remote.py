"""A Node over SSH: the experiment's worktree, server and bench run on the node, under its
supervisor; the logs and the import trace are copied back into the local run folder.

The server listens on the node's 127.0.0.1; the agent reaches it through a forwarded port.
"""

from __future__ import annotations

import contextlib
import posixpath
import time
import uuid
from collections.abc import Collection, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path, PurePath, PurePosixPath

from tools.config import TargetConfig
from tools.node.node_environment import build_on_node
from tools.node.ssh_host import HostError, HostLost, SSHHost, connect
from tools.node.ssh_tunnel import forwarded_port
from tools.node.supervisor import RemoteSupervisor, supervised
from tools.proc.import_trace import ANSWERS, FLUSH, TORCH, ImportTrace, read_trace, traced_env
from tools.proc.open_trace import Watch, watch_opens
from tools.proc.server import ServerError, ServerInfo, exit_code, exit_error, wait_ready
from tools.proc.worker_env import WorkerEnv, process_env
from tools.repo.worktree import join_patches
from tools.stack.environment import BuiltEnvironment, Sources


class RemoteNode:
    def __init__(
        self, config: TargetConfig, host: SSHHost, supervisor: RemoteSupervisor, out_dir: Path
    ) -> None:
        self.python = config.python
        self.subdir = PurePosixPath(".")  # [target] repo names the repository itself
        self.host = host
        self.sup = supervisor
        self.repo = config.target.repo
        self.out_dir = out_dir
        self.trace_dir = f"{supervisor.run_dir}/imports"
        self.hook_dir = posixpath.dirname(host.helper()) + "/hooks"
        self.files: dict[str, dict[str, list[str]]] = {}  # environment folder -> its files

    def free_port(self) -> int:
        return int(self.sup.call("port")["port"])

    @contextmanager
    def worktree(
        self, good_sha: str, patches: list[str], keep_patch: Path
    ) -> Iterator[PurePosixPath]:
        """The supervisor removes the worktree when the experiment's supervisor closes."""
        patch = join_patches(patches)
        if patch:
            keep_patch.parent.mkdir(parents=True, exist_ok=True)
            keep_patch.write_text(patch)
        reply = self.sup.call("worktree", wait_s=600.0, repo=self.repo, sha=good_sha, patch=patch)
        yield PurePosixPath(reply["path"])

    @contextmanager
    def server(
        self,
        argv: list[str],
        cwd: PurePath,
        env: dict[str, str],
        port: int,
        log_path: Path,
        ready: str,
        timeout_s: float,
    ) -> Iterator[ServerInfo]:
        remote_log = f"{self.sup.run_dir}/{log_path.name}"
        pid = int(
            self.sup.call("launch", argv=argv, cwd=str(cwd), env=env, log=log_path.name)["pid"]
        )
        try:
            with forwarded_port(self.host, port) as local_port:
                base_url = f"http://127.0.0.1:{local_port}"
                ready_s = wait_ready(
                    lambda: self.sup.call("poll")["exit"],
                    base_url,
                    ready,
                    lambda: self._read(remote_log),
                    str(log_path),
                    timeout_s,
                )
                yield ServerInfo(
                    pid=pid,
                    port=port,
                    base_url=base_url,
                    node_url=f"http://127.0.0.1:{port}",
                    log_path=str(log_path),
                    ready_s=ready_s,
                )
        except Exception as e:
            # a bench or readiness error that is really the connection going: say so
            if not isinstance(e, HostLost) and self._lost():
                raise HostLost(
                    f"connection to {self.host.endpoint.label} lost during the "
                    f"experiment ({type(e).__name__})"
                ) from None
            code = (
                None
                if isinstance(e, ServerError)
                else exit_code(lambda: self.sup.call("poll")["exit"])
            )
            if code is not None:  # the server ended: that, not a reset connection, is the news
                raise exit_error(
                    code, self._read(remote_log), str(log_path), "the benchmark"
                ) from None
            raise
        finally:
            # on a dropped connection the supervisor stops the group itself
            with contextlib.suppress(HostError):
                self.sup.call("stop", wait_s=30.0)
                self.host.fetch(remote_log, log_path)

    def _lost(self) -> bool:
        deadline = time.monotonic() + 1.0  # the transport notices a dead link within a moment
        while self.host.alive and time.monotonic() < deadline:
            time.sleep(0.05)
        return not self.host.alive

    def _read(self, path: str) -> str:
        try:
            return self.host.read_text(path)
        except HostError:
            if not self.host.alive:
                raise
            return ""

    def worker_env(self, pid: int, names: frozenset[str] = frozenset()) -> WorkerEnv:
        records = self.sup.call("environ", pid=pid)["processes"]
        return WorkerEnv(
            root_pid=pid,
            names=sorted(names),
            processes=[
                process_env(
                    r["pid"], r["ppid"], r["name"], r["cmdline"], r["env"], pid, names, r.get("exe")
                )
                for r in records
            ],
        )

    def shell(
        self, command: str, cwd: PurePath, env: dict[str, str], timeout_s: float
    ) -> tuple[int | None, str]:
        reply = self.sup.call(
            "shell",
            wait_s=timeout_s + 60.0,
            command=command,
            cwd=str(cwd),
            env=env,
            timeout_s=timeout_s,
        )
        return (None if reply["timed_out"] else reply["code"]), reply["output"]

    def read_text(self, path: PurePath) -> str:
        return self.host.read_text(str(path))

    def traced_env(self, env: dict[str, str], cwd: PurePath) -> dict[str, str]:
        with contextlib.suppress(OSError):
            self.host.sftp.mkdir(self.trace_dir)
        return traced_env(
            env,
            PurePosixPath(self.trace_dir),
            cwd,
            PurePosixPath(self.hook_dir),
            inherited=self.sup.pythonpath,
        )

    def torch_trace_dir(self) -> str:
        return f"{self.trace_dir}/{TORCH}"

    def wait_trace(self, pids: list[int], ask: str = FLUSH, timeout_s: float = 3.0) -> None:
        """As tools.proc.import_trace.wait_for_trace, over SFTP (a process that has exited
        since it reported never answers: the timeout bounds the wait)."""
        token, deadline = uuid.uuid4().hex, time.monotonic() + timeout_s
        with self.host.sftp.open(f"{self.trace_dir}/{ask}", "w") as out:
            out.write(token)
        while time.monotonic() < deadline:
            names = set(self.host.sftp.listdir(self.trace_dir))
            wanted = {f"{pid}.{ANSWERS[ask]}" for pid in pids if f"{pid}.txt" in names}
            answered = {
                name
                for name in wanted & names
                if self.host.read_text(f"{self.trace_dir}/{name}") == token
            }
            if answered == wanted:
                return
            time.sleep(0.1)

    def watch_opens(self, tree: PurePath, paths: Collection[str]) -> AbstractContextManager[Watch]:
        return watch_opens(Path(tree), [])  # the node's files are not watched from here

    def read_trace(
        self, tree: PurePath, watch: Collection[str] = (), copies: bool = True
    ) -> ImportTrace:
        local = self.out_dir / "imports"
        self.host.fetch(self.trace_dir, local)
        repo = PurePosixPath(self.repo)
        return read_trace(
            local, tree, resolve=False, watch=watch, user_repo=repo if repo.is_absolute() else None
        )

    def environment(
        self, pins: dict[str, str], base_python: str, sources: Sources
    ) -> BuiltEnvironment:
        built, files = build_on_node(self.host, self.shell, pins, base_python, sources)
        self.files[built.folder] = files
        return built

    def distributions(self, environment: BuiltEnvironment) -> dict[PurePath, str]:
        files = self.files.get(environment.folder, {})
        return {PurePosixPath(path): name for name, paths in files.items() for path in paths}

    def place(self, folder: Path) -> PurePath:
        """Copied into the experiment's run folder on the node (removed with it)."""
        remote = f"{self.sup.run_dir}/{folder.name}"
        self.host.upload(folder, remote)
        return PurePosixPath(remote)


@contextmanager
def remote_node(config: TargetConfig, out_dir: Path) -> Iterator[RemoteNode]:
    assert config.host is not None
    host = connect(config.host)
    with supervised(host, config.target.repo) as supervisor:
        yield RemoteNode(config, host, supervisor, out_dir)
