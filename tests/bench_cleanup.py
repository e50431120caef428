"""Seconds from SIGKILL of the agent, mid-experiment, to the last process of its server gone.

    python tests/bench_cleanup.py [--runs 5]

The seed lab's server (a main process and 8 schedulers) is stopped by its keeper
(tools/proc/group_keeper.py): SIGTERM to the group, SIGKILL after 5 s. Not a test: timings belong in
benchmarks, not in assertions.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from tools.lab.create import create_lab


def _tree(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def _cmdline(proc: psutil.Process) -> str:
    try:
        return " ".join(proc.cmdline())
    except psutil.Error:
        return ""


def _alive(procs: list[psutil.Process]) -> bool:
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                return True
        except psutil.Error:
            continue
    return False


def one_run(lab: Path) -> float:
    agent = subprocess.Popen(
        [sys.executable, "-m", "agent", "experiment", "--samples", "400"],
        cwd=lab,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while sum("spawn_main" in _cmdline(p) for p in _tree(agent.pid)) < 8:
        if time.monotonic() > deadline or agent.poll() is not None:
            raise SystemExit("the lab's server never came up")
        time.sleep(0.05)
    time.sleep(0.5)  # into the benchmark
    server = [p for p in _tree(agent.pid) if "group_keeper" not in _cmdline(p)]
    agent.kill()
    killed = time.perf_counter()
    while _alive(server):
        time.sleep(0.01)
    return time.perf_counter() - killed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        lab = Path(tmp) / "lab"
        create_lab("seed", lab)
        times = [one_run(lab) for _ in range(args.runs)]
    print(
        f"SIGKILL of the agent to its server gone ({args.runs} runs): "
        f"median {statistics.median(times):.3f} s, max {max(times):.3f} s"
    )


if __name__ == "__main__":
    main()
