"""A [stack] on a node over SSH (a real sshd on 127.0.0.1): each package set is built as an
environment on the node, from the wheel folder sent there, and the import trace read on the
node tells which distributions ran. The culprit's bad version is its next release: that
release is the first slow one, and its hunks are searched at once."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import assert_one_line_error, make_repo, run_cli, sh
from tests.node.sshd import Sshd
from tests.node.test_ssh import _home, _remote_config
from tests.stack.test_stack_investigation import _work
from tests.stack.wheels import Wheel, make_wheels
from tools.lab.stack_lab import stack_config

BENCH = """\
import time
import slowlib

for _ in range(3):
    started = time.perf_counter()
    slowlib.work()
    print(f"latency_ms: {(time.perf_counter() - started) * 1000:.3f}")
"""


def _stack(tmp_path: Path) -> Path:
    """slowlib 1.0 -> 1.1 (slow in 1.1) and `unused` 1.0 -> 2.0, never imported."""
    wheels = tmp_path / "wheels"
    timings = (("1.0", 0.01), ("1.1", 0.05))
    specs = [Wheel("slowlib", v, code=_work(seconds)) for v, seconds in timings]
    specs += [Wheel("unused", v) for v in ("1.0", "2.0")]
    make_wheels(wheels, specs)
    repo = make_repo(tmp_path)
    (repo / "bench.py").write_text(BENCH)
    (repo / "good.txt").write_text("slowlib==1.0\nunused==1.0\n")
    (repo / "bad.txt").write_text("slowlib==1.1\nunused==2.0\n")
    sh(repo, "git", "add", ".")
    sh(repo, "git", "commit", "-qm", "the service and its two package sets")
    # the sets by absolute path: the node's config lives in a folder of its own
    sets = [str(repo / name) for name in ("good.txt", "bad.txt")]
    (repo / "debug-agent.toml").write_text(stack_config(*sets, str(wheels)))
    return repo


def test_a_stack_on_the_node_is_built_and_traced_there(sshd: Sshd, tmp_path: Path) -> None:
    repo = _stack(tmp_path)
    here = _remote_config(tmp_path, repo)
    env = _home(tmp_path, sshd)
    args = ["investigate", "--symptom", "latency_ms 50 (was 10)", "--json"]
    done = run_cli(*args, cwd=here, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["status"] == "confirmed", result["notes"]
    releases = result["releases"]
    assert (releases["package"], releases["before"], releases["first_slow"]) == (
        "slowlib",
        "1.0",
        "1.1",
    ), releases
    [culprit] = result["culprits"]
    assert culprit["package"] == "slowlib 1.0 -> 1.1" and "time.sleep(0.05)" in culprit["diff"]
    # the node's trace, against the files of the node's environment: never loaded, dropped
    assert [d["candidate"] for d in result["dropped"]] == ["pkg-unused"], result["dropped"]
    records = sorted(Path(result["session_dir"]).glob("launches/*/environment.txt"))
    assert records and all("/.cache/debug-agent/envs/" in r.read_text() for r in records)
    # "current" reads this machine's Python, not the node's: said in one line
    config = (here / "debug-agent.toml").read_text()
    (here / "debug-agent.toml").write_text(config.replace(f'"{repo}/bad.txt"', '"current"'))
    assert_one_line_error(run_cli("check", cwd=here, env=env), "current", "[host]")
