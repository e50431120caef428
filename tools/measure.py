"""One measurement: launch the target's server, run its benchmark, stop the server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from tools.bench import BenchResult, run_generate_bench
from tools.config import TargetConfig
from tools.server import free_port, running_server


class Measurement(BaseModel):
    argv: list[str]
    env: dict[str, str]
    log_path: str
    ready_s: float
    bench: BenchResult


def measure(config: TargetConfig, cwd: Path, log_path: Path,
            transform_argv: Callable[[list[str]], list[str]] | None = None,
            launch_env: dict[str, str] | None = None,
            on_phase: Callable[[str], None] | None = None,
            on_request: Callable[[int, int], None] | None = None) -> Measurement:
    port = free_port()
    argv = config.launch_argv(port)
    if transform_argv is not None:
        argv = transform_argv(argv)
    if launch_env is None:
        launch_env = config.launch.env
    if config.bench.kind != "generate":
        raise NotImplementedError(f"bench kind {config.bench.kind!r} is not supported yet")
    if on_phase:
        on_phase("loading")
    with running_server(argv, cwd, launch_env, port, log_path, config.launch.ready,
                        config.launch.timeout_s) as server:
        if on_phase:
            on_phase("benchmark")
        b = config.bench
        result = run_generate_bench(server.base_url, b.requests, b.concurrency, b.input_len,
                                    b.output_len, b.warmup, on_done=on_request)
    return Measurement(argv=argv, env=launch_env, log_path=str(log_path),
                       ready_s=server.ready_s, bench=result)
