"""The seed's all-reduce regression on a real 2-rank tensor-parallel server (torch.distributed,
gloo on the CPU): NCCL tuning that reaches both ranks is told apart from the real culprit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import only_main_worktree, repo_fingerprint, run_cli
from tools.lab.truth import load_truth


@pytest.mark.usefixtures("many_processes")
def test_two_ranks_allreduce_culprit_confirmed_nccl_env_cleared(tmp_path: Path) -> None:
    lab = tmp_path / "tp-lab"
    assert run_cli("lab", "create", "tp", str(lab)).returncode == 0
    before = repo_fingerprint(lab)
    done = run_cli("investigate", "--symptom", "verify 90ms", "--json", cwd=lab, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["status"] == "confirmed", result["notes"]
    diff = {c["id"]: c for c in json.loads(run_cli("diff", "--json", cwd=lab).stdout)["candidates"]}
    truth = load_truth(lab)
    assert [(diff[c["id"]]["file"], diff[c["id"]]["header"]) for c in result["culprits"]] == [
        (e.file, e.hunk) for e in truth.culprits
    ]
    # how much slower the split all-reduce is depends on the machine (gloo's latency against
    # the compute): the engine's own statistics decide; the fix must land near good, not bad
    metric = result["metric"]
    assert abs(metric["after_fix"] - metric["good"]) < abs(metric["after_fix"] - metric["bad"])
    # flash.py is dropped before any launch, on the import trace; where real timing noise made
    # the revert look partial, the search for the rest took pruned candidates back and cleared
    # it by experiment instead (the result lists it there): the drop's evidence is in the
    # transcript either way
    cleared = {diff[c["candidate"]]["file"]: " ".join(c["evidence"]) for c in result["cleared"]}
    dropped = {d["file"]: " ".join(d["evidence"]) for d in result["dropped"]}
    assert "tpserve/attention/flash.py" in dropped.keys() | cleared.keys()
    transcript = (Path(result["session_dir"]) / "transcript.jsonl").read_text()
    drop = next(line for line in transcript.splitlines() if "dropped flash-" in line)
    assert "tpserve/attention/flash.py was not imported by any of the" in drop
    assert "attention_backend='sdpa'" in drop
    for nccl in ("sitecustomize.py", "tpserve/launch.py"):
        assert "NCCL_PROTO=LL: reached 2/2 scheduler processes" in cleared[nccl]
        assert "NCCL_ALGO=Ring: reached 2/2 scheduler processes" in cleared[nccl]
        assert "explains none of the gap" in cleared[nccl]
    assert repo_fingerprint(lab) == before
    assert only_main_worktree(lab)
