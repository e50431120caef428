"""The import trace sees what the server's processes loaded, without changing what they run."""

from __future__ import annotations

import time
from pathlib import Path

from tools.config import load_config
from tools.proc.import_trace import read_trace, traced_env
from tools.proc.server import free_port, running_server
from tools.proc.worker_env import worker_env


def test_trace_lists_loaded_modules_and_keeps_the_targets_sitecustomize(
    seed_lab: Path, tmp_path: Path
) -> None:
    config = load_config(seed_lab)
    trace_dir = tmp_path / "trace"
    trace_dir.mkdir()
    env = traced_env(config.launch.env, trace_dir, seed_lab)
    port = free_port()
    with running_server(config.launch_argv(port), seed_lab, env, port, tmp_path / "s.log") as s:
        time.sleep(0.6)  # one dump period
        workers = worker_env(s.pid)
    trace = read_trace(trace_dir, seed_lab)
    assert trace.processes >= 9
    attention = "python/sglang/srt/layers/attention/"
    assert trace.imported(attention + "triton_backend.py")
    assert trace.imported("python/sglang/srt/distributed/parallel_state.py")
    assert not trace.imported(attention + "flashinfer_mla_backend.py")
    assert trace.imported("python/sitecustomize.py")  # the lab's own, chained by the hook
    schedulers = [p for p in workers.processes if p.role == "scheduler"]
    assert {p.env.get("NCCL_PROTO") for p in schedulers} == {"LL"}
