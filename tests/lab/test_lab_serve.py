"""`debug-agent lab serve`: a real SGLang-shaped process tree that leaves nothing behind."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

from tests.conftest import wait_gone
from tools.proc.server import free_port
from tools.sglang.log import parse_log


def _wait_health(port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stdout.read()
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise AssertionError("lab server never became healthy")


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_serve_then_stop_leaves_no_process(seed_lab: Path, stop_signal: int) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent", "lab", "serve", str(seed_lab), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _wait_health(port, proc)
        base = f"http://127.0.0.1:{port}"
        reply = httpx.post(
            base + "/generate",
            json={"text": "hello", "sampling_params": {"max_new_tokens": 16}},
            timeout=30,
        ).json()
        assert reply["meta_info"]["completion_tokens"] == 16
        assert reply["meta_info"]["spec_verify_ct"] >= 1
        for route in ("/get_server_info", "/server_info"):
            info = httpx.get(base + route, timeout=5).json()
            assert info["attention_backend"] == "triton"
            assert info["tp_size"] == 8
        completion = httpx.post(
            base + "/v1/completions",
            json={"model": "x", "prompt": "hi", "max_tokens": 8},
            timeout=30,
        ).json()
        assert completion["usage"]["completion_tokens"] == 8
        tree = psutil.Process(proc.pid).children(recursive=True)
        schedulers = [p for p in tree if "multiprocessing" in " ".join(p.cmdline())]
        assert len(schedulers) >= 8, [p.cmdline() for p in tree]
        pids = [proc.pid] + [p.pid for p in tree]
        proc.send_signal(stop_signal)
        output, _ = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "attention_backend='triton'" in output
    parsed = parse_log(output)  # the lab speaks SGLang's log format
    assert parsed.server_args["attention_backend"] == "triton"
    assert parsed.server_args["tp_size"] == 8
    assert parsed.prefill and all(p.tp_rank == 0 for p in parsed.prefill)
    assert "server_args=ServerArgs(" in output
    assert "Use triton backend by default." in output
    assert wait_gone(pids) == []
