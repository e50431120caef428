"""Profiles of real processes (the sampler the import trace's hook starts), where the time
moved between two of them, and the priors an investigation draws from that."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import make_repo, run_cli, sh
from tools.proc.import_trace import PROFILE_INTERVAL_VAR, PROFILE_VAR, traced_env
from tools.profile.movers import movers
from tools.profile.samples import read_profile

# `scan` runs a regex whose backtracking holds the GIL for each call, ROUNDS times; `tidy` is
# light Python work beside it
APP = """\
import re
import time

PATTERN = re.compile(r"(a|aa)+$")
ROUNDS = 40


def scan():
    for _ in range(ROUNDS):
        PATTERN.match("a" * 16 + "b")


def tidy():
    return sum(range(2000))


def main():
    for _ in range(20):
        started = time.perf_counter()
        scan()
        tidy()
        print(f"latency_ms: {(time.perf_counter() - started) * 1000:.3f}")


main()
"""


def _run(tree: Path, rounds: int, trace: Path, on: str = "1") -> float:
    (tree / "app.py").write_text(APP.replace("ROUNDS = 40", f"ROUNDS = {rounds}"))
    # a sample every 2 ms: the good state's process runs for some 40 ms
    env = traced_env({PROFILE_VAR: on, PROFILE_INTERVAL_VAR: "2"}, trace, tree)
    done = subprocess.run(
        [sys.executable, "app.py"], cwd=tree, env=env, capture_output=True, text=True, check=True
    )
    return min(float(line.split()[-1]) for line in done.stdout.splitlines())


def test_the_function_that_runs_the_slow_regex_is_the_top_mover(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    bad_value = _run(tree, 400, tmp_path / "bad")
    good_value = _run(tree, 40, tmp_path / "good")
    bad, good = read_profile(tmp_path / "bad", tree), read_profile(tmp_path / "good", tree)
    assert bad is not None and good is not None
    assert bad.processes == 1 and bad.samples > 0
    # the regex holds the GIL: the sampler waits, and the time it waited goes to `scan`, where
    # the interpreter next lets it run (the loop's jump back)
    assert bad.functions["app.py:scan"][1] > 0.5 * bad.seconds, bad.functions
    [top, *_] = movers(bad, good, bad_value, good_value, higher_is_worse=True)
    assert top.function == "app.py:scan" and top.change == "grew", top
    assert top.share is not None and top.share > 0.7, top
    assert top.low > 0  # beyond the sampling's error
    inclusive = movers(bad, good, bad_value, good_value, True, "inclusive")
    assert {"app.py:main", "app.py:scan"} <= {m.function for m in inclusive}
    assert bad.roots == ["app.py:<module>"]  # the outermost: on the way to all of it


WATCHED = """\
import threading
import time


def watch():  # a watchdog: asleep but for a moment every 20 ms
    while True:
        time.sleep(0.02)


def work():
    return sum(i * i for i in range(200_000))


threading.Thread(target=watch, daemon=True).start()
started = time.perf_counter()
while time.perf_counter() - started < 1.0:
    work()
"""


def test_a_thread_that_sleeps_is_idle_and_the_working_one_counts(tmp_path: Path) -> None:
    """Wall time of a sleeping thread grows with the run, not with the work: the kernel says
    it sleeps, and the sampler leaves it out (as idle seconds), while the main thread's work is
    all there."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "app.py").write_text(WATCHED)
    trace = tmp_path / "trace"
    env = traced_env({PROFILE_VAR: "1", PROFILE_INTERVAL_VAR: "5"}, trace, tree)
    subprocess.run([sys.executable, "app.py"], cwd=tree, env=env, check=True, timeout=60)
    profile = read_profile(trace, tree)
    assert profile is not None
    assert profile.waiting_s > 0.5  # the watchdog's second, or most of it
    watch = profile.functions.get("app.py:watch", (0.0, 0.0))[0]
    assert watch < 0.2 * profile.seconds, profile.functions
    assert profile.functions["app.py:work.<locals>.<genexpr>"][1] > 0.5 * profile.seconds
    assert "app.py:<module>" in profile.roots


def test_the_profiler_turned_off_writes_nothing(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    _run(tree, 4, tmp_path / "trace", on="0")
    assert (tmp_path / "trace").is_dir() and list((tmp_path / "trace").glob("*.txt"))
    assert read_profile(tmp_path / "trace", tree) is None


def test_the_profile_puts_the_culprit_hunk_first(tmp_path: Path) -> None:
    """Two commits after good: one makes the regex backtrack more (the culprit), one edits
    `tidy`. The profile's movers name `scan` and the culprit hunk's prior says why; `tidy`'s
    hunk, in a function that took the same time, is searched later."""
    # three times the default run: at a sample a millisecond the good state gives some 90, so
    # that a full suite's load beside it leaves the batch means enough to tell `scan` grew
    app = APP.replace("range(20)", "range(60)")
    repo = make_repo(tmp_path, {"app.py": app})
    (repo / "app.py").write_text(app.replace("range(2000)", "range(2001)"))
    sh(repo, "git", "commit", "-qam", "tidy: one more")
    (repo / "debug-agent.toml").write_text(
        '[target]\ngood = "good"\n[bench]\nkind = "command"\ncommand = "{python} app.py"\n'
        'metric = "latency_ms"\nmetric_regex = "latency_ms: ([0-9.]+)"\nper_launch = "best"\n'
        "[profile]\ninterval_ms = 1\n"  # the good state runs for 30 ms: a sample a millisecond
    )
    sh(repo, "git", "add", "debug-agent.toml")
    sh(repo, "git", "commit", "-qm", "config")
    (repo / "app.py").write_text((repo / "app.py").read_text().replace("= 40", "= 400"))
    sh(repo, "git", "commit", "-qam", "scan: more rounds")
    done = run_cli("investigate", "--symptom", "latency_ms 20 (was 2)", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["status"] == "confirmed", result["notes"]
    [culprit] = result["culprits"]
    assert "+ROUNDS = 400" in culprit["diff"], culprit
    lines = Path(result["session_dir"], "transcript.jsonl").read_text().splitlines()
    texts = [json.loads(line).get("text", "") for line in lines]
    assert any(t.startswith("where the time moved: app.py:scan grew") for t in texts), texts
    tied = [t for t in texts if t.startswith("kept") and "ROUNDS, which it uses" in t]
    assert tied and "profile: app.py:scan grew" in tied[0], texts
    report = Path(result["session_dir"], "report.md").read_text()
    assert "## Where the time moved" in report and "`app.py:scan`" in report


def _report(folder: Path, pid: int, width: float, batches: list[dict[str, float]]) -> None:
    folder.mkdir(exist_ok=True)
    data = {"interval_s": 0.01, "samples": 2000, "idle_s": 0.0, "batch_s": width}
    (folder / f"{pid}.profile.json").write_text(json.dumps({**data, "batches": batches}))


def test_a_burst_in_one_batch_of_time_is_not_a_mover(tmp_path: Path) -> None:
    """Consecutive looks are alike: a function seen in one burst of the run is within the
    batch means' interval, though the binomial one of 2000 samples would call it a mover;
    one that grew all along is still one. Reports counted in batches of two widths are
    aligned in time."""
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    steady, burst, slow = "pkg/app.py:run:1;pkg/app.py:", "burst:5", "slow:9"
    step = {f"{tree}/{steady}step:3": 0.05}
    good = [dict(step, **{f"{tree}/{steady}{slow}": 0.01}) for _ in range(8)]
    bad = [dict(step, **{f"{tree}/{steady}{slow}": 0.03}) for _ in range(8)]
    bad[0][f"{tree}/{steady}{burst}"] = 0.05
    _report(tmp_path / "good", 1, 0.1, good)
    _report(tmp_path / "bad", 1, 0.1, bad)
    _report(tmp_path / "bad", 2, 0.05, [dict(step) for _ in range(16)])  # 2 batches to 1 of 0.1
    bad_profile = read_profile(tmp_path / "bad", tree)
    good_profile = read_profile(tmp_path / "good", tree)
    assert bad_profile is not None and good_profile is not None
    assert bad_profile.batches == 8 and bad_profile.processes == 2
    assert bad_profile.errors["pkg/app.py:step"][1] < bad_profile.errors["pkg/app.py:burst"][1]
    found = {m.function: m for m in movers(bad_profile, good_profile, 1.2, 1.0, True)}
    assert "pkg/app.py:slow" in found and found["pkg/app.py:slow"].change == "grew"
    assert "pkg/app.py:burst" not in found
    binomial = bad_profile.model_copy(update={"errors": {}})  # as before batches
    assert "pkg/app.py:burst" in {
        m.function for m in movers(binomial, good_profile, 1.2, 1.0, True)
    }
