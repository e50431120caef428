"""The investigation engine end to end on real labs: verdicts, evidence, hygiene, transcript."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import only_main_worktree, repo_fingerprint, run_cli
from tools.lab.create import create_lab
from tools.lab.random_scenario import draw_scenario
from tools.lab.truth import load_truth


def _investigate(cwd: Path, *extra: str, symptom: str = "verify 29ms") -> tuple[dict, str]:
    done = run_cli("investigate", "--symptom", symptom, "--json", *extra, cwd=cwd, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout), done.stderr


def _truth_keys(lab: Path) -> set[str]:
    return {
        e.env.split("=")[0] if e.env else f"{e.file} {e.hunk}" for e in load_truth(lab).culprits
    }


def _named_keys(result: dict, lab: Path) -> set[str]:
    diff = json.loads(run_cli("diff", "--json", cwd=lab).stdout)["candidates"]
    by_id = {c["id"]: c for c in diff}
    return {
        by_id[c["id"]]["name"]
        if c["kind"] == "env"
        else f"{by_id[c['id']]['file']} {by_id[c['id']]['header']}"
        for c in result["culprits"]
    }


def test_empty_folder_investigates_the_seed_lab(tmp_path: Path) -> None:
    result, err = _investigate(tmp_path)
    assert err.splitlines()[0].startswith(
        f"No debug-agent.toml in {tmp_path}: investigating the built-in seed lab"
    )
    assert result["status"] == "confirmed"
    assert [c["file"] for c in result["culprits"]] == [
        "python/sglang/srt/distributed/parallel_state.py"
    ]
    built = Path(err.splitlines()[0].split("(built in ")[1].rstrip(")."))
    assert not built.exists() and not built.parent.exists(), "the temporary lab is left"


def test_a_config_beside_the_repository_investigates_it(tmp_path: Path) -> None:
    lab = tmp_path / "lab"
    create_lab("seed", lab)
    elsewhere = tmp_path / "configs"
    elsewhere.mkdir()  # not a git repository: [target] repo names the one to study
    (elsewhere / "debug-agent.toml").write_text(
        (lab / "debug-agent.toml").read_text().replace('repo = "."', f'repo = "{lab}"')
    )
    assert run_cli("check", cwd=elsewhere).returncode == 0
    result, _ = _investigate(elsewhere)
    assert result["status"] == "confirmed" and result["target"]["repo"] == str(lab)


def test_seed_lab_verdict_evidence_and_hygiene(seed_lab: Path, tmp_path: Path) -> None:
    lab = tmp_path / "lab"
    create_lab("seed", lab)
    before = repo_fingerprint(lab)
    result, _ = _investigate(lab, symptom="verify 29ms (was 19)")
    assert result["status"] == "confirmed"
    assert _named_keys(result, lab) == _truth_keys(lab)
    assert result["reproduction"]["passed"]  # the bench measures what the symptom says
    assert result["culprits"][0]["share"] > 0.8 and result["unexplained_share"] < 0.2
    m = result["metric"]
    assert m["name"] == "verify_ms" and m["bad"] > 26 and m["good"] < 21
    assert m["after_fix"] < 21
    dropped = {Path(d["file"]).name: " ".join(d["evidence"]) for d in result["dropped"]}
    assert "attention_backend='triton'" in dropped["flashinfer_mla_backend.py"]
    assert "DeepseekV3ForCausalLM" in dropped["server_args.py"]
    assert "Glm4MoeForCausalLM" in dropped["server_args.py"]
    cleared = {c["candidate"].split("-")[0]: " ".join(c["evidence"]) for c in result["cleared"]}
    for patch in ("engine", "scheduler", "sitecustomize"):
        assert "NCCL_PROTO=LL: reached 8/8 scheduler processes" in cleared[patch]
        assert "explains none of the gap" in cleared[patch]
    assert repo_fingerprint(lab) == before
    assert only_main_worktree(lab)
    # where the time moved: the lab's torch traces put NCCL's all-reduce, and pynccl's
    # function that launched it, first; no search launch was needed before the confirmation
    top = result["time_moved"][0]
    assert "all_reduce" in top["function"] and top["source"] == "gpu", top
    assert top["share"] > 0.5
    assert result["launches"] == 6  # the references, their replicates, the two-way confirmation
    session = Path(result["session_dir"])
    assert "parallel_state" in (session / "report.md").read_text()
    assert "| GPU |" in (session / "report.md").read_text()
    assert "Reproduction check: passed" in (session / "report.md").read_text()
    assert "reproduction check passed" in (session / "transcript.jsonl").read_text()
    lines = (session / "transcript.jsonl").read_text().splitlines()
    header, events = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    assert header["kind"] == "header" and header["schema"].startswith("debug-agent.transcript/")
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert all(e["text"] and e["node"] and e["kind"] for e in events)
    assert {"gather", "hypothesize", "plan", "experiment", "judge", "report"} <= {
        e["node"] for e in events
    }


def _first_seed(shape: str) -> int:
    return next(
        seed
        for seed in range(1000)
        if draw_scenario(seed).shape == shape and not draw_scenario(seed).start_failure_rate
    )


@pytest.mark.parametrize("shape", ["pair", "additive", "env", "arg-default"])  # single: the seed
def test_each_kind_of_culprit_is_confirmed(shape: str, tmp_path: Path) -> None:
    lab = tmp_path / "lab"
    create_lab("random", lab, seed=_first_seed(shape), noise=0.05)
    result, _ = _investigate(lab)
    assert result["status"] == "confirmed", result["notes"]
    assert _named_keys(result, lab) == _truth_keys(lab)


def test_no_regression_control_names_no_culprit(tmp_path: Path) -> None:
    lab = tmp_path / "lab"
    create_lab("random", lab, seed=_first_seed("control"), noise=0.05)
    result, _ = _investigate(lab)
    assert result["status"] == "no_regression"
    assert result["culprits"] == []


def test_budget_is_respected(seed_lab: Path) -> None:
    result, _ = _investigate(seed_lab, "--max-launches", "2")
    assert result["status"] == "budget_exhausted"
    assert result["launches"] == 2


def test_lab_bench_scores_against_the_truth() -> None:
    done = run_cli("lab", "bench", "--scenarios", "2", "--seed", "3", "--json", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert set(out["summary"]) == {
        "correct",
        "wrong",
        "inconclusive",
        "median_launches",
        "median_rounds",
        "median_bisect_launches",
        "median_ddmin_launches",
        "median_search_launches",
    }
    assert out["summary"]["wrong"] == 0 and len(out["scenarios"]) == 2
    assert all(s["bisect_launches"] >= 2 for s in out["scenarios"])
    # the search's own launches: the references, their replicates and the confirmation aside
    assert all(0 <= s["search_launches"] <= s["launches"] - 4 for s in out["scenarios"])


def test_hundreds_of_drops_print_one_line_per_reason(tmp_path: Path) -> None:
    lab = tmp_path / "lab"
    create_lab("seed", lab)
    unused = lab / "python" / "sglang" / "srt" / "unused"
    unused.mkdir()
    for i in range(120):  # modules no server process ever imports
        (unused / f"helper_{i:03d}.py").write_text(f"def helper_{i}():\n    return {i}\n")
    done = run_cli(
        "investigate", "--symptom", "verify 29ms", "--max-launches", "2", cwd=lab, timeout=300
    )  # the drops are printed before the first search launch
    assert done.returncode == 0, done.stderr[-3000:]
    printed = (done.stdout + done.stderr).splitlines()
    assert max(len(line) for line in printed) < 1000
    summary = [line for line in printed if "dropped 12" in line]
    assert len(summary) == 1 and "file never imported (e.g. " in summary[0], printed[:40]
    assert not any("dropped helper_" in line for line in printed)
    session = next(line.split("report: ")[1] for line in printed if "report: " in line)
    events = [
        json.loads(line)
        for line in Path(session).with_name("transcript.jsonl").read_text().splitlines()[1:]
    ]
    assert sum(e["text"].startswith("dropped helper_") for e in events) == 120


def test_the_seed_lab_run_from_a_repository_without_a_config_keeps_out_of_it(
    tmp_path: Path,
) -> None:
    """Run in a repository of the user's that has no config, investigate takes the seed lab;
    its sessions went to ./sessions, inside that repository's tree."""
    repo = tmp_path / "theirs"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    env = {k: v for k, v in os.environ.items() if k != "DEBUG_AGENT_SESSIONS_DIR"}
    argv = [sys.executable, "-m", "agent", "investigate", "--json", "--max-launches", "2"]
    done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    session = Path(json.loads(done.stdout)["session_dir"])
    assert session.is_relative_to(os.environ["DEBUG_AGENT_STATE_DIR"]), session
    assert sorted(p.name for p in repo.iterdir()) == [".git"]
