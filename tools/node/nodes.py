"""Where experiments run: this machine, or a node over SSH (tools/node/remote.py).

A Node is what one experiment needs from the machine the target lives on: a scratch worktree,
a free port, a supervised server, the environment of its processes, a shell for the bench, and
the import trace. The experiment code is the same for both.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Collection, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path, PurePath
from typing import Protocol

from tools.bounded_read import read_regular
from tools.config import TargetConfig
from tools.folders import cache_dir
from tools.limits import MAX_RESULT_BYTES
from tools.proc.groups import start_group, stop_group
from tools.proc.import_trace import (
    FLUSH,
    TORCH,
    ImportTrace,
    read_trace,
    traced_env,
    wait_for_trace,
)
from tools.proc.open_trace import Watch, watch_opens
from tools.proc.server import ServerInfo, free_port, reap_stale_servers, running_server
from tools.proc.worker_env import WorkerEnv, worker_env
from tools.repo.worktree import reap_stale_worktrees, scratch_worktree
from tools.stack.environment import BuiltEnvironment, Sources, build_environment
from tools.stack.loaded import distribution_files


class Node(Protocol):
    python: str  # what {python} stands for

    @property
    def subdir(self) -> PurePath:  # read-only: a node may hold a Path or a PurePosixPath
        """Where commands run inside a worktree (the config's place in the repo)."""
        ...

    def free_port(self) -> int: ...

    def worktree(
        self, good_sha: str, patches: list[str], keep_patch: Path
    ) -> AbstractContextManager[PurePath]: ...

    def server(
        self,
        argv: list[str],
        cwd: PurePath,
        env: dict[str, str],
        port: int,
        log_path: Path,
        ready: str,
        timeout_s: float,
    ) -> AbstractContextManager[ServerInfo]: ...

    def worker_env(self, pid: int, names: frozenset[str] = frozenset()) -> WorkerEnv: ...

    def shell(
        self, command: str, cwd: PurePath, env: dict[str, str], timeout_s: float
    ) -> tuple[int | None, str]: ...  # (None: timed out, output)

    def read_text(self, path: PurePath) -> str: ...

    def traced_env(self, env: dict[str, str], cwd: PurePath) -> dict[str, str]: ...

    def wait_trace(self, pids: list[int], ask: str = FLUSH) -> None: ...

    def torch_trace_dir(self) -> str:  # where the server writes torch traces, on the node
        ...

    def read_trace(
        self, tree: PurePath, watch: Collection[str] = (), copies: bool = True
    ) -> ImportTrace: ...

    def watch_opens(self, tree: PurePath, paths: Collection[str]) -> AbstractContextManager[Watch]:
        """Which of `paths` (in the tree) some process opens until the block ends."""
        ...

    def environment(
        self, pins: dict[str, str], base_python: str, sources: Sources
    ) -> BuiltEnvironment:
        """A [stack]'s package set as an environment on the node, built once (Unresolved
        when it cannot be)."""
        ...

    def distributions(self, environment: BuiltEnvironment) -> dict[PurePath, str]:
        """Every file of an environment built here -> the distribution it belongs to."""
        ...

    def place(self, folder: Path) -> PurePath:
        """A folder of this machine where the node's processes can read it."""
        ...


class LocalNode:
    """This machine: the repository is `repo_root`, artifacts go straight to `out_dir`."""

    def __init__(
        self, python: str, repo_root: Path, out_dir: Path, subdir: Path = Path(".")
    ) -> None:
        self.python = python
        self.repo_root = repo_root
        self.trace_dir = out_dir / "imports"
        self.subdir = subdir

    def free_port(self) -> int:
        return free_port()

    def worktree(
        self, good_sha: str, patches: list[str], keep_patch: Path
    ) -> AbstractContextManager[Path]:
        return scratch_worktree(self.repo_root, good_sha, patches, keep_patch=keep_patch)

    def server(
        self,
        argv: list[str],
        cwd: PurePath,
        env: dict[str, str],
        port: int,
        log_path: Path,
        ready: str,
        timeout_s: float,
    ) -> AbstractContextManager[ServerInfo]:
        return running_server(argv, Path(cwd), env, port, log_path, ready, timeout_s)

    def worker_env(self, pid: int, names: frozenset[str] = frozenset()) -> WorkerEnv:
        return worker_env(pid, names)

    def shell(
        self, command: str, cwd: PurePath, env: dict[str, str], timeout_s: float
    ) -> tuple[int | None, str]:
        """Its own process group, stopped whole when it ends, times out or is interrupted."""
        with tempfile.TemporaryFile() as output:
            proc = start_group(
                ["/bin/sh", "-c", command], Path(cwd), {**os.environ, **env}, output=output
            )
            code: int | None = None
            try:
                code = proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                pass
            finally:
                stop_group(proc)
            output.seek(0)
            return code, output.read().decode(errors="replace")

    def read_text(self, path: PurePath) -> str:
        return read_regular(Path(path), MAX_RESULT_BYTES).decode(errors="replace")

    def traced_env(self, env: dict[str, str], cwd: PurePath) -> dict[str, str]:
        self.trace_dir.mkdir(parents=True, exist_ok=True)
        return traced_env(env, self.trace_dir, Path(cwd).resolve())

    def wait_trace(self, pids: list[int], ask: str = FLUSH) -> None:
        wait_for_trace(self.trace_dir, pids, ask=ask)

    def torch_trace_dir(self) -> str:
        return str(self.trace_dir / TORCH)

    def read_trace(
        self, tree: PurePath, watch: Collection[str] = (), copies: bool = True
    ) -> ImportTrace:
        root = self.repo_root.resolve()
        return read_trace(self.trace_dir, Path(tree), True, watch, root, copies)

    def watch_opens(self, tree: PurePath, paths: Collection[str]) -> AbstractContextManager[Watch]:
        return watch_opens(Path(tree), paths, self.repo_root.resolve())

    def environment(
        self, pins: dict[str, str], base_python: str, sources: Sources
    ) -> BuiltEnvironment:
        return build_environment(pins, cache_dir() / "envs", base_python, sources)

    def distributions(self, environment: BuiltEnvironment) -> dict[PurePath, str]:
        return {path: name for path, name in distribution_files(Path(environment.folder)).items()}

    def place(self, folder: Path) -> PurePath:
        return folder


@contextmanager
def open_node(config: TargetConfig, config_dir: Path, out_dir: Path) -> Iterator[Node]:
    """The node for one experiment; a remote one holds a supervisor until the block ends."""
    if config.host is None:
        from tools.repo.candidates import open_repo

        root = Path(open_repo(config_dir / config.target.repo).working_tree_dir or ".")
        reap_stale_servers()  # left by an agent that was killed
        reap_stale_worktrees(root)
        try:  # commands run where the config sits inside the repository, in the worktree too
            subdir = config_dir.resolve().relative_to(root.resolve())
        except ValueError:
            subdir = Path(".")
        yield LocalNode(config.python, root, out_dir, subdir)
        return
    from tools.node.remote import remote_node

    with remote_node(config, out_dir) as node:
        yield node
