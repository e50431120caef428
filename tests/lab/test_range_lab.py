"""Range labs: an upgrade's history after a good tag, the same for the same seed, whose truth is
true, and on which an investigation names the culprit commit and hunk."""

from __future__ import annotations

import json
from pathlib import Path

import git

from agent.bench.baselines import bisect_probes, ddmin_launches, range_baseline
from agent.bench.lab import _commits_right
from tests.conftest import run_cli
from tools.lab.range_lab import BROKEN, GOOD_TAG
from tools.lab.truth import RangeTruth, load_truth
from tools.repo.candidates import Candidate


def _create(dest: Path, *args: str) -> None:
    created = run_cli("lab", "create", "range", str(dest), *args)
    assert created.returncode == 0, created.stderr


def test_same_seed_same_history_and_its_truth_holds(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    _create(a, "--seed", "3", "--commits", "12")
    _create(b, "--seed", "3", "--commits", "12")
    repo = git.Repo(a)
    history = [c.hexsha for c in repo.iter_commits(f"{GOOD_TAG}..HEAD")]
    assert history == [c.hexsha for c in git.Repo(b).iter_commits(f"{GOOD_TAG}..HEAD")]
    assert len(history) == 12 and not repo.is_dirty(untracked_files=True)

    truth = load_truth(a)
    assert truth.range is not None and truth.range.commits == 12
    assert truth.scenario.startswith("range:")
    in_order = history[::-1]
    for key, sha in truth.range.culprit_commits.items():
        file, hunk = key.split(" ", 1)
        position = in_order.index(sha) + 1
        assert position in truth.range.culprit_positions
        assert position < 12  # a culprit commit is never the last: bisect must search
        assert file in repo.git.show("--name-only", "--format=", sha).split()
        assert hunk.startswith("@@ ")
    for position in truth.range.broken_positions:  # the server cannot import there ...
        sha = in_order[position - 1]
        text = repo.git.show(f"{sha}:{BROKEN}")
        assert "_lab_setting_not_defined_yet" in text
        # ... and the next commit fixes it
        assert "_lab_setting_not_defined_yet" not in repo.git.show(f"{in_order[position]}:{BROKEN}")


def test_create_range_refuses_bad_arguments_in_one_line(tmp_path: Path) -> None:
    for args in (
        ["range", str(tmp_path / "r1")],  # no seed
        ["range", str(tmp_path / "r2"), "--seed", "1", "--commits", "1"],
        ["range", str(tmp_path / "r3"), "--seed", "1", "--commits", "501"],
        ["random", str(tmp_path / "r4"), "--seed", "1", "--commits", "10"],
    ):
        done = run_cli("lab", "create", *args)
        assert done.returncode != 0
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "Traceback" not in done.stderr
        assert not Path(args[1]).exists()


def test_range_investigation_names_the_culprit_commit_and_hunk(tmp_path: Path) -> None:
    lab = tmp_path / "range"
    _create(lab, "--seed", "5")
    truth = load_truth(lab)
    assert truth.range is not None
    done = run_cli("investigate", "--symptom", "verify 29ms", "--json", cwd=lab, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "confirmed"
    (culprit,) = result["culprits"]
    key = next(k for k in truth.range.culprit_commits if culprit["summary"].startswith(k))
    assert truth.range.culprit_commits[key] == culprit["commit"]["sha"]
    assert culprit["diff"].startswith("@@ ") and "+" in culprit["diff"]
    assert result["launches"] <= range_baseline(truth.range) + 2

    report = (Path(result["session_dir"]) / "report.md").read_text()
    subject = git.Repo(lab).commit(culprit["commit"]["sha"]).summary
    assert f'"{subject}"' in report and "```diff" in report
    transcript = (Path(result["session_dir"]) / "transcript.jsonl").read_text()
    assert "first-parent commits" in transcript and "revert" in transcript


def test_bisect_baseline_is_a_real_git_bisect_run() -> None:
    """git bisect's own probes, noise-free: about log2 of the commits, more with skips."""
    assert bisect_probes(30, 16, set()) == 5
    assert bisect_probes(8, 1, set()) == 3
    assert bisect_probes(30, 20, {10, 15, 22}) > bisect_probes(30, 20, set())
    assert bisect_probes(20, 20, set(), low=19) == 0  # bad right after good: no probe
    assert ddmin_launches(8, {3}, together=False) == 2 + 5  # a half, a quarter, an eighth
    truth = RangeTruth(
        commits=30, culprit_positions=[16], hunks_in={16: 4}, culprit_hunks_in={16: [1]}
    )
    assert range_baseline(truth) == 2 + 5 + ddmin_launches(4, {1}, False) - 2


def test_a_range_verdict_is_right_only_with_the_commit_that_brought_the_hunk() -> None:
    """lab bench --ranges scores the commit too: the right hunk in the wrong commit is wrong."""
    hunk = Candidate(kind="hunk", id="triton-1", file="a.py", header="@@ -1 +1 @@", patch="")
    by_id = {hunk.id: hunk}
    want = {f"a.py {hunk.header}": "1" * 40}
    named = {"culprits": [{"id": hunk.id, "commit": {"sha": "1" * 40}}]}
    assert _commits_right(named, by_id, want)
    named["culprits"][0]["commit"]["sha"] = "2" * 40
    assert not _commits_right(named, by_id, want)
