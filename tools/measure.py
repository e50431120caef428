"""One measurement: launch the server in a folder, run the benchmark, stop the server; or, for
a target without a server (no [launch]), run the bench command alone in that folder."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePath

import httpx
from pydantic import BaseModel

from tools.argv import option_value
from tools.bench.command import Placeholders, run_command_bench
from tools.bench.serving import BenchResult, run_http_bench
from tools.config import BenchSection, TargetConfig
from tools.digits import is_digits
from tools.errors import ToolError
from tools.node.nodes import Node
from tools.proc.server import ServerInfo
from tools.proc.worker_env import PREFIXES, WorkerEnv, process_env
from tools.progress import Progress
from tools.server_http import get_json, server_client


def launch_port(command: str, free_port: Callable[[], int]) -> int:
    """A free port for `{port}`; or the fixed `--port N` of a command without the placeholder."""
    if "{port}" in command:
        return free_port()
    argv = shlex.split(command)
    for i, arg in enumerate(argv):
        value = (
            arg.split("=", 1)[1]
            if arg.startswith("--port=")
            else (argv[i + 1] if arg == "--port" and i + 1 < len(argv) else None)
        )
        if value is not None:
            if not is_digits(value) or not 0 < int(value) < 65536:
                raise ToolError(f"launch.command has --port {value!r}, not a port (1 to 65535)")
            return int(value)
    raise ToolError(
        "launch.command needs {port} (or a fixed --port N) so the server can be reached"
    )


def port_flag(command: str) -> str | None:
    """The option that carries `{port}` in a launch command (`--port`, `-p`); None without."""
    words = shlex.split(command) if "{port}" in command else []
    for before, word in zip(["", *words], words, strict=False):
        if word == "{port}" and before.startswith("-"):
            return before
        if word.startswith("-") and word.endswith("={port}"):
            return word.removesuffix("={port}")
    return None


def model_info(base_url: str, api_key: str | None = None) -> dict | None:
    """SGLang's /model_info (older: /get_model_info); None for servers without it."""
    with server_client(5.0, api_key) as client:
        for route in ("/model_info", "/get_model_info"):
            try:
                info = get_json(client, base_url + route)
            except httpx.HTTPError:
                continue
            if isinstance(info, dict):
                return info
    return None


@dataclass(frozen=True)
class LaunchPlan:
    """What one launch runs, when it is not the config's [launch] as is."""

    command: str | None = None  # the command line template (default: [launch] command)
    transform_argv: Callable[[list[str]], list[str]] | None = None  # edits the command line
    env: dict[str, str] | None = None  # replaces [launch] env
    watch_env: frozenset[str] = frozenset()  # more variables to read from the workers
    requests: int | None = None  # benchmark requests (default: [bench] requests)
    # called with the server and its API key: as the bench begins, and after it
    before_bench: Callable[[ServerInfo, str | None], None] | None = None
    before_stop: Callable[[ServerInfo, str | None], None] | None = None


class Measurement(BaseModel):
    argv: list[str]
    env: dict[str, str]
    log_path: str
    ready_s: float
    worker_env: WorkerEnv  # what each process of the server was started with
    model_info: dict | None  # GET /model_info, where the server has it
    bench: BenchResult


def measure(
    config: TargetConfig,
    node: Node,
    cwd: PurePath,
    log_path: Path,
    plan: LaunchPlan | None = None,
    progress: Progress | None = None,
) -> Measurement:
    """Launch `config`'s command (or the plan's) in `cwd` on `node`, bench it, stop it.

    The workers' environment is read for the usual prefixes, the config's variables and the
    plan's `watch_env`.
    """
    plan = plan or LaunchPlan()
    if config.bench_only:
        return _measure_bench_only(config, node, cwd, log_path, plan, progress)
    port = launch_port(plan.command or config.launch.command, node.free_port)
    argv = config.launch_argv(port, plan.command, node.python)
    if plan.transform_argv is not None:
        argv = plan.transform_argv(argv)
    env = config.launch.env if plan.env is None else plan.env
    if progress:
        progress.phase("loading")
    with node.server(
        argv, cwd, env, port, log_path, config.launch.ready, config.launch.timeout_s
    ) as server:
        workers = node.worker_env(
            server.pid,
            plan.watch_env | set(env) | set(config.launch.env) | set(config.baseline.env or {}),
        )
        api_key = option_value(argv, "--api-key")
        info = model_info(server.base_url, api_key)
        if progress:
            progress.phase("benchmark")
        if plan.before_bench:
            plan.before_bench(server, api_key)
        result = _bench(config, node, cwd, env, server, log_path, plan, api_key, progress)
        if plan.before_stop:
            plan.before_stop(server, api_key)
    return Measurement(
        argv=argv,
        env=env,
        log_path=str(log_path),
        ready_s=server.ready_s,
        worker_env=workers,
        model_info=info,
        bench=result,
    )


def _bench(
    config: TargetConfig,
    node: Node,
    cwd: PurePath,
    env: dict[str, str],
    server: ServerInfo,
    log_path: Path,
    plan: LaunchPlan,
    api_key: str | None,
    progress: Progress | None,
) -> BenchResult:
    """The config's bench against the running server: its command, or the HTTP bench."""
    b = config.bench
    if b.kind != "command":
        return _http_bench(b, server.base_url, plan.requests, api_key, progress)
    return run_command_bench(
        b,
        node,
        cwd,
        env,
        server.node_url,
        server.port,
        log_path.with_suffix(".bench.log"),
        worktree=worktree_root(cwd, node.subdir),
        config_dir=config.config_dir,
    )


def worktree_root(cwd: PurePath, subdir: PurePath) -> PurePath:
    """The scratch tree's root, from the folder commands run in (`subdir` of it)."""
    depth = len([part for part in subdir.parts if part != "."])
    return cwd.parents[depth - 1] if depth else cwd


def tree_placeholders(config: TargetConfig, node: Node, cwd: PurePath) -> Placeholders:
    """{python}, {worktree} and {config_dir} for a command run in the scratch tree at `cwd`."""
    return Placeholders(node.python, worktree_root(cwd, node.subdir), config.config_dir)


def _measure_bench_only(
    config: TargetConfig,
    node: Node,
    cwd: PurePath,
    log_path: Path,
    plan: LaunchPlan,
    progress: Progress | None,
) -> Measurement:
    """No server: the bench command (the plan's, with its argument changes) is the launch; its
    output is the launch's log. What it imported is traced through `plan.env` as a server's
    would be; its environment is the one it was started with."""
    places = tree_placeholders(config, node, cwd)
    command = places.fill(plan.command or config.launch.command)
    argv = shlex.split(command)
    if plan.transform_argv is not None and (changed := plan.transform_argv(argv)) != argv:
        argv, command = changed, shlex.join(changed)  # a shell pipeline is kept when unchanged
    env = config.launch.env if plan.env is None else plan.env
    if progress:
        progress.phase("benchmark")
    result = run_command_bench(
        config.bench,
        node,
        cwd,
        env,
        None,
        None,
        log_path,
        worktree=places.worktree,
        config_dir=config.config_dir,
        command=command,
    )
    return Measurement(
        argv=argv,
        env=env,
        log_path=str(log_path),
        ready_s=0.0,
        worker_env=_started_with(config, argv, env, plan.watch_env),
        model_info=None,
        bench=result,
    )


def _started_with(
    config: TargetConfig, argv: list[str], env: dict[str, str], watch: frozenset[str]
) -> WorkerEnv:
    """The bench process's environment as it was started: this machine's plus `env`; on a
    node only `env` is known (its own environment is not read)."""
    local = config.host is None
    environ = {**os.environ, **env} if local else dict(env)
    names = (watch | set(env) | set(config.baseline.env or {})) if local else set(env)
    record = process_env(0, 0, "bench", argv, environ, 0, frozenset(names))
    return WorkerEnv(
        root_pid=0,
        processes=[record],
        source="the environment the bench command was started with",
        prefixes=list(PREFIXES) if local else [],
        names=sorted(names),
    )


def _http_bench(
    b: BenchSection,
    base_url: str,
    requests: int | None,
    api_key: str | None,
    progress: Progress | None,
) -> BenchResult:
    return run_http_bench(
        base_url,
        b.kind,
        requests or b.requests,
        b.concurrency,
        b.input_len,
        b.output_len,
        b.warmup,
        b.timeout_s,
        on_done=progress.request if progress else None,
        api_key=api_key,
    )
