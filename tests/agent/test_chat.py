"""`debug-agent chat` in a real terminal (tmux): suggest an env var, approve and refuse
launches, drop a hypothesis with a reason, finish, ask for the report."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tools.lab.create import create_lab


class Terminal:
    def __init__(self, command: str, tmp: Path) -> None:
        assert shutil.which("tmux"), "tmux is needed (.ci/run installs Debian's tmux)"
        self.socket = f"debug-agent-test-{os.getpid()}"
        self.tmux("new-session", "-d", "-s", "chat", "-x", "220", "-y", "50", command)
        self.seen = 0

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True
        ).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-S", "-5000", "-t", "chat")

    def send(self, text: str) -> None:
        self.tmux("send-keys", "-t", "chat", text, "Enter")

    def wait(self, text: str, timeout: float = 90) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if screen.count(text) > 0 and screen.rfind(text) >= self.seen:
                self.seen = screen.rfind(text) + len(text)
                return screen
            time.sleep(0.1)
        raise AssertionError(f"never saw {text!r}:\n{self.screen()[-3000:]}")

    def wait_any(self, *texts: str, timeout: float = 90) -> str:
        """The first of `texts` to appear after what was seen; it is then seen too."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            found = [
                (screen.find(t, self.seen), t) for t in texts if screen.find(t, self.seen) >= 0
            ]
            if found:
                at, text = min(found)
                self.seen = at + len(text)
                return text
            time.sleep(0.1)
        raise AssertionError(f"never saw any of {texts}:\n{self.screen()[-3000:]}")

    def close(self) -> None:
        self.tmux("kill-server")


@pytest.fixture()
def terminal(tmp_path: Path):
    lab = tmp_path / "lab"
    create_lab("seed", lab)
    env = " ".join(
        f"{k}={shlex.quote(os.environ[k])}"
        for k in ("DEBUG_AGENT_SESSIONS_DIR", "DEBUG_AGENT_STATE_DIR", "DEBUG_AGENT_LAB_TRUTH_DIR")
    )
    command = (
        f"cd {shlex.quote(str(lab))} && env {env} {shlex.quote(sys.executable)} -m agent "
        f"chat; sleep 30"
    )  # no --symptom: on a terminal, chat asks for it
    term = Terminal(command, tmp_path)
    yield term
    term.close()


def test_chat_session_in_a_terminal(terminal: Terminal) -> None:
    terminal.wait("What got worse?")
    terminal.send("verify 29ms (was 45)")  # an improvement: said so, and asked again
    terminal.wait("describes an improvement")
    terminal.wait("What got worse?")
    terminal.send("verify 29ms")
    terminal.wait("/run starts.")
    terminal.send("/facts")
    terminal.wait("no facts yet: /run launches the bad and good states")
    terminal.send("/hypotheses")
    terminal.wait("no hypotheses yet: /run")
    terminal.send("/run")
    terminal.wait("launch the bad and good states, with the import trace (gather facts)? [y/n]")
    terminal.send("y")
    terminal.wait("launch bad (calibrate")
    terminal.send("y")
    terminal.wait("launch good (calibrate")
    terminal.send("y")
    terminal.wait("launch bad - {parallel_state")
    terminal.send("n")
    terminal.wait("not launched")
    terminal.send("/suggest NCCL_ALGO=Tree")
    terminal.wait("launch the bad state with NCCL_ALGO=Tree? [y/n]")
    terminal.send("y")
    screen = terminal.wait("suggestion NCCL_ALGO=Tree")
    # the lab's sitecustomize.py overwrites NCCL_ALGO in every process: it never arrives
    assert "reached 0/8 scheduler processes" in screen
    terminal.send("/drop engine-3dcdd1 it only sets NCCL variables that arrive and cannot matter")
    terminal.wait("drop engine-3dcdd1: applied at the next /run")
    terminal.send("/run")
    for _ in range(10):  # approve every launch the engine asks for, until its verdict
        if terminal.wait_any("? [y/n]", "confirmed: /report shows the report") != "? [y/n]":
            break
        terminal.send("y")
    terminal.send("/hypotheses")
    screen = terminal.wait("engine-3dcdd1  dropped")
    terminal.send("/report")
    screen = terminal.wait("## Culprits")
    assert "parallel_state-2ce853" in screen
    terminal.send("/quit")
    terminal.wait("left session")
    transcripts = list(Path(os.environ["DEBUG_AGENT_SESSIONS_DIR"]).rglob("transcript.jsonl"))
    text = "\n".join(p.read_text() for p in transcripts)
    assert "the user dropped engine-3dcdd1" in text


def test_a_raised_budget_goes_on_and_chat_resumes_any_session(tmp_path: Path) -> None:
    lab = tmp_path / "lab"
    create_lab("seed", lab)
    lines = "/budget 3\n/run\ny\ny\n/budget 10\n/run\ny\ny\ny\n/quit\n"
    done = subprocess.run(
        [sys.executable, "-m", "agent", "chat", "--symptom", "verify 29ms"],
        cwd=lab,
        input=lines,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "budget_exhausted: /report" in out
    assert out.index("budget_exhausted: /report") < out.index("confirmed: /report")
    session = out.split("left session ")[1].split()[0]
    resumed = subprocess.run(
        [sys.executable, "-m", "agent", "chat", "--resume", session],
        cwd=lab,
        input="/hypotheses\n/quit\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "parallel_state-2ce853  confirmed" in resumed.stdout
