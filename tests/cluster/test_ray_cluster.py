"""Experiments on a real two-node Ray cluster: a head and a second node, started with Ray's own
cluster utilities on this machine (each its own raylet, with two experiment slots)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.conftest import only_main_worktree, repo_fingerprint, run_cli
from tools.repo.worktree import reap_stale_worktrees

SLOTS_PER_NODE = 2


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[str, set[str]]]:
    """The cluster's address and its two node ids (shortened as the transcript gives them)."""
    from ray.cluster_utils import Cluster

    args = {"num_cpus": 1, "resources": {"slot": SLOTS_PER_NODE}}
    ray_cluster = Cluster(initialize_head=True, head_node_args={**args, "include_dashboard": False})
    try:
        second = ray_cluster.add_node(**args)
        ray_cluster.wait_for_nodes()
        nodes = {ray_cluster.head_node.node_id[:8], second.node_id[:8]}
        yield ray_cluster.address, nodes
    finally:
        ray_cluster.shutdown()


def _seed_lab(tmp_path: Path, name: str, address: str | None) -> Path:
    """A seed lab whose servers carry a mark of their own in their environment."""
    lab = tmp_path / name
    assert run_cli("lab", "create", "seed", str(lab)).returncode == 0
    config = lab / "debug-agent.toml"
    mark = f'LAB_MARK = "{lab}", '
    config.write_text(config.read_text().replace("env = { ", "env = { " + mark, 1))
    if address:
        with config.open("a") as out:
            out.write(f'\n[cluster]\nray = "{address}"\nslots = 4\nresources = {{ slot = 1 }}\n')
    return lab


def _lab_processes(lab: Path) -> list[psutil.Process]:
    """The processes the lab's launches started, on any node (all are on this machine)."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get("LAB_MARK") == str(lab):
                found.append(proc)
        except psutil.Error:
            continue
    return found


def _payloads(session_dir: str) -> list[dict]:
    lines = (Path(session_dir) / "transcript.jsonl").read_text().splitlines()
    return [event.get("payload") or {} for event in map(json.loads, lines)]


def test_a_lab_on_two_nodes_gives_the_serial_verdict(
    cluster: tuple[str, set[str]], tmp_path: Path
) -> None:
    address, nodes = cluster
    serial = json.loads(
        run_cli(
            "investigate",
            "--symptom",
            "verify 29ms",
            "--json",
            cwd=_seed_lab(tmp_path, "serial", None),
            timeout=300,
        ).stdout
    )
    lab = _seed_lab(tmp_path, "parallel", address)
    before = repo_fingerprint(lab)
    done = run_cli("investigate", "--symptom", "verify 29ms", "--json", cwd=lab, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)

    def verdict(r: dict) -> tuple:
        return r["status"], [c["id"] for c in r["culprits"]], [c["candidate"] for c in r["cleared"]]

    assert verdict(result) == verdict(serial)
    assert result["rounds"] < result["launches"]
    # the lab has no secret: nothing the nodes send back reads as one
    transcript = (Path(result["session_dir"]) / "transcript.jsonl").read_text()
    assert "***" not in transcript and "output 128 tokens" in transcript
    events = _payloads(result["session_dir"])
    seen = {str(e["ran_on"]).split("@")[0] for e in events if e.get("ran_on")}
    assert nodes <= seen, seen
    planned = [e["round"] for e in events if "round" in e]
    assert max(planned) == result["rounds"]  # the transcript records each round's launches
    launches = Path(result["session_dir"]) / "launches"
    assert all(any(folder.glob("server-*.log")) for folder in launches.iterdir())
    assert _lab_processes(lab) == []
    assert only_main_worktree(lab) and repo_fingerprint(lab) == before


def test_sigkill_mid_round_leaves_no_server_on_any_node(
    cluster: tuple[str, set[str]], tmp_path: Path
) -> None:
    address, _ = cluster
    lab = _seed_lab(tmp_path, "killed", address)
    agent = subprocess.Popen(
        [sys.executable, "-m", "agent", "investigate", "--symptom", "verify 29ms"],
        cwd=lab,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while len(servers := _lab_processes(lab)) < 3 and time.monotonic() < deadline:
            assert agent.poll() is None
            time.sleep(0.2)
        assert len(servers) >= 3, "no round of servers came up"
    finally:
        os.kill(agent.pid, signal.SIGKILL)
        agent.wait()
    deadline = time.monotonic() + 10
    while _lab_processes(lab) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _lab_processes(lab) == []
    # the killed workers' worktrees: removed by the next run's first experiment on the node
    deadline = time.monotonic() + 10
    while (
        reap_stale_worktrees(lab) or not only_main_worktree(lab)
    ) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert only_main_worktree(lab)


def test_cluster_settings_that_cannot_work_are_one_line_errors(tmp_path: Path) -> None:
    lab = _seed_lab(tmp_path, "wrong", None)
    config = lab / "debug-agent.toml"
    text = config.read_text()
    config.write_text(text + "\n[cluster]\nslots = 4\n")
    done = run_cli("investigate", "--symptom", "verify 29ms", cwd=lab)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert 'slots > 1 needs ray = "local"' in done.stderr
    config.write_text(text + '\n[host]\nssh = "me@node"\n[cluster]\nray = "auto"\n')
    done = run_cli("investigate", "--symptom", "verify 29ms", cwd=lab)
    assert "[host] and [cluster] do not go together" in done.stderr
    # a cluster that does not answer: said before anything starts, by check and investigate
    config.write_text(text + '\n[cluster]\nray = "127.0.0.1:1"\nslots = 2\n')
    for command in (["check"], ["investigate", "--symptom", "verify 29ms"]):
        done = run_cli(*command, cwd=lab, timeout=60)
        assert done.returncode != 0 and "Traceback" not in done.stderr
        assert "cannot reach 127.0.0.1:1 (Connection refused)" in done.stderr
    # resources no node has (a config copied from a GPU machine): Ray held every experiment as
    # infeasible, for ever; now the run ends with status error and says why
    config.write_text(text + '\n[cluster]\nray = "local"\nresources = { GPU = 8 }\n')
    done = run_cli("investigate", "--symptom", "verify 29ms", "--json", cwd=lab, timeout=120)
    result = json.loads(done.stdout)
    assert result["status"] == "error" and result["launches"] == 0
    assert any("GPU = 8}: no node of the cluster has them" in note for note in result["notes"])
    assert only_main_worktree(lab) and _lab_processes(lab) == []


def test_no_node_fits() -> None:
    from tools.cluster.check import no_node_fits

    head = {"Alive": True, "Resources": {"CPU": 2.0, "GPU": 8.0}}
    small = {"Alive": True, "Resources": {"CPU": 2.0}}
    assert no_node_fits([small, head], {"GPU": 8, "CPU": 0}) is None
    assert no_node_fits([small], {}) is None
    why = no_node_fits([small, {**head, "Alive": False}], {"GPU": 8})
    assert why is not None and "(its nodes: GPU 0)" in why
    assert "none alive" in (no_node_fits([], {"slot": 1}) or "")
