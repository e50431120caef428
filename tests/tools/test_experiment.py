"""Experiments on a real lab: the numbers, and the user's repository left byte-identical."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import git, live_pids, repo_fingerprint, run_cli, wait_gone
from tools.lab.create import create_lab

CULPRIT = "parallel_state"


@pytest.fixture()
def busy_lab(tmp_path: Path) -> Path:
    """A seed lab whose owner also has a staged file, a branch and a stash entry."""
    lab = tmp_path / "lab"
    create_lab("seed", lab)
    (lab / "notes.txt").write_text("my notes\n")
    git(lab, "add", "notes.txt")
    git(lab, "branch", "feature")
    git(lab, "update-ref", "--create-reflog", "-m", "keep me", "refs/stash", "HEAD")
    return lab


def _json_experiment(lab: Path, *args: str) -> dict:
    done = run_cli("experiment", "--json", *args, cwd=lab)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_experiment_numbers_and_hygiene(busy_lab: Path) -> None:
    before = repo_fingerprint(busy_lab)
    bad = _json_experiment(busy_lab)
    assert bad["metric"]["name"] == "verify_ms"
    assert bad["metric"]["median"] == pytest.approx(29.0, rel=0.1)
    assert len(bad["metric"]["samples"]) == 8 and bad["launches"] == 1
    assert Path(bad["log"]).read_text().count("Decode batch") > 0
    assert len(bad["samples"]) == 8 and bad["samples"][0]["meta_info"]["spec_verify_ct"] > 0
    fixed = _json_experiment(busy_lab, "--revert", CULPRIT)
    assert fixed["config"]["reverted"] == [CULPRIT]
    assert fixed["metric"]["median"] == pytest.approx(19.0, rel=0.1)
    applied = _json_experiment(busy_lab, "--apply", CULPRIT, "--samples", "4")
    assert applied["metric"]["median"] == pytest.approx(29.0, rel=0.1)
    assert len(applied["metric"]["samples"]) == 4
    assert repo_fingerprint(busy_lab) == before
    assert git(busy_lab, "worktree", "list").count("\n") == 0  # only the main worktree
    assert git(busy_lab, "stash", "list") == "stash@{0}: keep me"


def test_env_and_args_reach_the_server(busy_lab: Path) -> None:
    out = _json_experiment(
        busy_lab,
        "--env",
        "NCCL_DEBUG=INFO",
        "--env",
        "NCCL_ALGO=Tree",
        "--arg",
        "--decode-log-interval 5",
        "--samples",
        "2",
    )
    schedulers = [p for p in out["worker_env"]["processes"] if p["role"] == "scheduler"]
    assert len(schedulers) == 8
    assert {p["env"]["NCCL_DEBUG"] for p in schedulers} == {"INFO"}
    # the lab's sitecustomize.py overwrites NCCL_ALGO in every process: Tree never arrives
    assert {p["env"]["NCCL_ALGO"] for p in schedulers} == {"Ring"}
    assert {p["env"]["NCCL_PROTO"] for p in schedulers} == {"LL"}
    assert "decode_log_interval=5" in Path(out["log"]).read_text()


def _cmdline(proc: psutil.Process) -> str:
    try:
        return " ".join(proc.cmdline())
    except psutil.Error:  # gone, or a zombie (git's short-lived children)
        return ""


def _cmdline_of(pid: int) -> str:
    try:
        return _cmdline(psutil.Process(pid))
    except psutil.Error:
        return ""


def _start_long_experiment(lab: Path) -> tuple[subprocess.Popen, list[int]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent", "experiment", "--samples", "400"],
        cwd=lab,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        tree = psutil.Process(proc.pid).children(recursive=True)
        if sum("spawn_main" in _cmdline(p) for p in tree) >= 8:
            time.sleep(0.3)  # into the benchmark
            return proc, [p.pid for p in psutil.Process(proc.pid).children(recursive=True)]
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("the experiment's server never came up")


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_mid_experiment_cleans_up(busy_lab: Path, sig: int, code: int) -> None:
    before = repo_fingerprint(busy_lab)
    proc, server_pids = _start_long_experiment(busy_lab)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert wait_gone(server_pids) == []
    assert git(busy_lab, "worktree", "list").count("\n") == 0
    assert repo_fingerprint(busy_lab) == before


def test_kill_9_stops_the_server_at_once_and_next_start_removes_the_worktree(
    busy_lab: Path,
) -> None:
    before = repo_fingerprint(busy_lab)
    proc, pids = _start_long_experiment(busy_lab)
    assert any("group_keeper" in _cmdline_of(pid) for pid in pids)
    proc.kill()  # no finally runs in the agent: only its server's keeper acts
    proc.wait(timeout=10)
    assert wait_gone(pids, 10) == [], [_cmdline_of(p) for p in live_pids(pids)]
    assert "debug-agent-wt-" in git(busy_lab, "worktree", "list")
    nxt = run_cli("experiment", "--json", "--samples", "1", cwd=busy_lab)
    assert nxt.returncode == 0, nxt.stderr
    assert git(busy_lab, "worktree", "list").count("\n") == 0
    assert repo_fingerprint(busy_lab) == before


def test_kill_9_of_agent_and_keeper_then_next_start_reaps_the_server(busy_lab: Path) -> None:
    proc, pids = _start_long_experiment(busy_lab)
    keepers = [pid for pid in pids if "group_keeper" in _cmdline_of(pid)]
    assert keepers
    for pid in keepers:
        psutil.Process(pid).kill()
    proc.kill()
    proc.wait(timeout=10)
    time.sleep(0.5)
    assert live_pids(pids), "nothing survived the kill: this test would prove nothing"
    nxt = run_cli("experiment", "--json", "--samples", "1", cwd=busy_lab)
    assert nxt.returncode == 0, nxt.stderr
    assert wait_gone(pids) == []


def test_a_server_ready_by_a_log_line(seed_lab: Path, tmp_path: Path) -> None:
    """`ready = "log:<regex>"` waits for the line: the config's reader dropped the `log:` and
    polled the pattern as an HTTP path (an internal error at the first launch)."""
    text = (seed_lab / "debug-agent.toml").read_text()
    config = tmp_path / "debug-agent.toml"
    config.write_text(
        text.replace('repo = "."', f'repo = "{seed_lab}"').replace(
            'ready = "/health"', 'ready = "log:fired up and ready to roll"'
        )
    )
    done = run_cli("experiment", "--json", "--samples", "2", "--config", str(config))
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["metric"]["median"] > 0


def test_the_launched_server_is_reached_past_the_environments_proxies(seed_lab: Path) -> None:
    """With HTTP_PROXY set (company clusters), requests to 127.0.0.1 went to the proxy and the
    launch waited out its start-up time; a SOCKS ALL_PROXY was an internal error."""
    proxies = {
        "HTTP_PROXY": "http://127.0.0.1:9",
        "http_proxy": "http://127.0.0.1:9",
        "ALL_PROXY": "socks5://127.0.0.1:9",
    }
    done = run_cli("experiment", "--json", "--samples", "2", cwd=seed_lab, env=proxies)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["metric"]["median"] > 0


def test_the_serving_bench_measures_request_latency(seed_lab: Path) -> None:
    """ "latency 40ms" is a symptom the reader takes; the bench measured no latency_ms, so such
    an investigation stopped at its first launch."""
    done = run_cli("experiment", "--json", "--samples", "3", "--metric", "latency_ms", cwd=seed_lab)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert out["metric"]["name"] == "latency_ms" and len(out["metric"]["samples"]) == 3
    # a whole request: longer than its first token, and its decode steps at TPOT each
    assert out["metric"]["median"] > out["metrics"]["ttft_ms"]["median"]
