"""A real regression in real code: transformers' assisted generation, copied from the installed
package into a lab repository and investigated on the CPU like any target."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import git, only_main_worktree, run_cli
from tools.lab.truth import load_truth


@pytest.mark.usefixtures("many_processes")
def test_the_planted_verify_regression_is_confirmed_and_decoys_dropped(tmp_path: Path) -> None:
    lab = tmp_path / "transformers-lab"
    done = run_cli("lab", "create", "transformers", str(lab), timeout=300)
    assert done.returncode == 0, done.stderr
    before = (git(lab, "status", "--porcelain"), git(lab, "rev-parse", "HEAD"), git(lab, "diff"))
    done = run_cli("investigate", "--symptom", "per token 40ms", "--json", cwd=lab, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    truth = load_truth(lab)
    diff = {c["id"]: c for c in json.loads(run_cli("diff", "--json", cwd=lab).stdout)["candidates"]}
    assert result["status"] == "confirmed", result["notes"]
    named = [(diff[c["id"]]["file"], diff[c["id"]]["header"]) for c in result["culprits"]]
    assert named == [(e.file, e.hunk) for e in truth.culprits]
    assert result["metric"]["name"] == "ms_per_token"
    # the planted re-scoring doubles a verify step; the cheap steps around it are unchanged, and
    # a busy machine narrows the gap (1.9x in one CI run): the symptom is still unmistakable
    assert result["metric"]["bad"] > 1.5 * result["metric"]["good"]
    dropped = {Path(d["file"]).name: " ".join(d["evidence"]) for d in result["dropped"]}
    for never_run in ("msa_attention.py", "modeling_mistral.py"):
        assert "was not imported by any of the" in dropped[never_run]
    assert "comments/docstrings" in dropped["utils.py"]
    # no torch profiler behind this server's routes: said once, and the CPU profile ties the
    # culprit's function (the verify loop, whose time grew) to its hunk
    transcript = (Path(result["session_dir"]) / "transcript.jsonl").read_text()
    assert transcript.count("torch profiler: /start_profile answered 404") == 1
    assert "profile: src/transformers/generation/utils.py:GenerationMixin._assisted_decoding" in (
        transcript
    )
    assert (
        git(lab, "status", "--porcelain"),
        git(lab, "rev-parse", "HEAD"),
        git(lab, "diff"),
    ) == before
    assert only_main_worktree(lab)


@pytest.mark.usefixtures("many_processes")
def test_the_planted_acceptance_regression_is_searched_on_acceptance(tmp_path: Path) -> None:
    """The draft samples while the target verifies greedily: tokens per cycle fall, the cycle
    barely moves. The throughput symptom is split, and the search measures acceptance."""
    lab = tmp_path / "transformers-acceptance"
    done = run_cli(
        "lab", "create", "transformers", str(lab), "--scenario", "acceptance", timeout=300
    )
    assert done.returncode == 0, done.stderr
    truth = load_truth(lab)
    assert truth.symptom is not None and "tok/s (was" in truth.symptom
    done = run_cli("investigate", "--symptom", truth.symptom, "--json", cwd=lab, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    diff = {c["id"]: c for c in json.loads(run_cli("diff", "--json", cwd=lab).stdout)["candidates"]}
    assert result["status"] == "confirmed", result["notes"]
    named = [(diff[c["id"]]["file"], diff[c["id"]]["header"]) for c in result["culprits"]]
    assert named == [(e.file, e.hunk) for e in truth.culprits]
    # the symptom's numbers are one machine's: a slower CPU measures far from them (said in
    # the transcript), never "not reproduced" while the regression is there
    assert result["reproduction"]["bad"] < 0.5 * result["reproduction"]["good"]
    parts = result["decomposition"]
    assert parts["accept_length"]["share"] >= 0.8, parts
    assert parts["accept_length"]["bad"] < 0.5 * parts["accept_length"]["good"]
    # greedy decoding: the fixed tree accepts exactly what the good one does
    assert parts["accept_length"]["after_fix"] == pytest.approx(parts["accept_length"]["good"])
    assert result["metric"]["name"] == "accept_len"
    assert any("the search runs on acceptance" in note for note in result["notes"])
    assert only_main_worktree(lab)
