"""The config's `[symptom] default` is the symptom where none is given: `investigate` and `chat`
read it, `check` checks it; with neither, one line says what is missing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import assert_one_line_error, bench_repo, run_cli

BENCH = (
    "import re\n"
    "x = int(re.search(r'X = (\\d+)', open('x.py').read()).group(1))\n"
    "for _ in range(5):\n"
    "    print(f'latency_ms: {10 * x}')\n"
)


def _repo(tmp_path: Path, default: str | None) -> Path:
    repo = bench_repo(tmp_path, BENCH)
    if default is not None:
        with (repo / "debug-agent.toml").open("a") as config:
            config.write(f"[symptom]\ndefault = {json.dumps(default)}\n")
    return repo


def test_investigate_without_a_symptom_takes_the_configs_default(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "latency_ms 20 (was 10)")
    done = run_cli("investigate", "--json", cwd=repo)
    result = json.loads(done.stdout)
    assert result["status"] == "confirmed", result["notes"]
    state = json.loads((Path(result["session_dir"]) / "state.json").read_text())
    assert state["symptom"]["text"] == "latency_ms 20 (was 10)"


def test_chat_off_a_terminal_takes_the_configs_default(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "latency_ms 20 (was 10)")
    done = subprocess.run(
        [sys.executable, "-m", "agent", "chat", "--yes"],
        cwd=repo,
        input="/quit\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "/run starts." in done.stdout and "at phase gather" in done.stdout


def test_without_symptom_or_default_one_line_says_both(tmp_path: Path) -> None:
    repo = _repo(tmp_path, None)
    for command in ("investigate", "chat"):
        done = run_cli(command, cwd=repo)
        assert_one_line_error(done, "--symptom", "[symptom] default")


def test_check_reads_the_default(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "garbage")
    assert_one_line_error(run_cli("check", cwd=repo), "[symptom] default", "'garbage'")
    (tmp_path / "other").mkdir()
    repo = _repo(tmp_path / "other", "throughput 9 rows/s (was 20)")  # not the bench's metric
    assert_one_line_error(run_cli("check", cwd=repo), "[symptom] default")
    # the same failures investigate would meet, before any launch
    done = run_cli("investigate", cwd=repo)
    assert_one_line_error(done, "[symptom] default")
