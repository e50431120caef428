"""Ctrl-C, SIGTERM and SIGHUP stop an investigation within seconds, even while a benchmark request
hangs: the server is stopped, and the terminal says how to go on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import make_repo, only_main_worktree, tiny_server, wait_gone

# a server whose /generate never answers: it says so in a file, then waits forever
HANGING = tiny_server("""
with open(sys.argv[2], "w") as out:
    out.write(str(os.getpid()))
time.sleep(3600)
""")


@pytest.mark.parametrize(
    "sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"]
)
def test_a_signal_during_a_hung_request_stops_everything_and_says_how_to_resume(
    tmp_path: Path, sig: signal.Signals
) -> None:
    marker = tmp_path / "hanging.pid"
    repo = make_repo(tmp_path, {"server.py": HANGING, "work.py": "X = 1\n"})
    (repo / "work.py").write_text("X = 2\n")
    (repo / "debug-agent.toml").write_text(
        textwrap.dedent(f"""\
        [launch]
        command = "{{python}} server.py {{port}} {marker}"
        timeout_s = 30
        [bench]
        requests = 2
        timeout_s = 600
        warmup = 0  # the hung request is one of the pool's, not the warm-up
    """)
    )
    agent = subprocess.Popen(
        [sys.executable, "-m", "agent", "investigate", "--symptom", "TPOT 35ms"],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    try:
        deadline = time.monotonic() + 60
        while not (marker.exists() and marker.read_text()) and time.monotonic() < deadline:
            assert agent.poll() is None, agent.communicate()[0]
            time.sleep(0.1)
        server = int(marker.read_text())
        time.sleep(0.5)  # the request is in flight and hangs
        sent = time.monotonic()
        agent.send_signal(sig)
        out, _ = agent.communicate(timeout=10)
        gone_after = time.monotonic() - sent
    finally:
        if agent.poll() is None:
            agent.kill()
    assert gone_after < 10, gone_after
    assert agent.returncode != 0
    assert "Traceback" not in out
    assert "debug-agent investigate --resume " in out, out  # SIGHUP: a terminal or SSH gone
    assert f"interrupted ({'Ctrl-C' if sig == signal.SIGINT else sig.name})" in out
    assert wait_gone([server]) == [], "the server outlived the agent"
    assert only_main_worktree(repo)
