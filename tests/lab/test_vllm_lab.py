"""The vLLM lab (vLLM 0.8.5's layout, log lines and OpenAI API; a Ray executor on 2 ranks):
`investigate` confirms the planted FlashAttention decode regression both ways and drops the
decoys with evidence (FlashInfer and Qwen2 never imported, NCCL tuning that never reaches the
Ray worker); `paths` and `logs parse` read the lab's vLLM log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import only_main_worktree, repo_fingerprint, run_cli
from tools.lab.truth import load_truth


@pytest.mark.usefixtures("steady_timings")
def test_vllm_lab_culprit_confirmed_decoys_dropped_by_evidence(tmp_path: Path) -> None:
    lab = tmp_path / "vllm-lab"
    assert run_cli("lab", "create", "vllm", str(lab)).returncode == 0
    before = repo_fingerprint(lab)
    done = run_cli(
        "investigate", "--symptom", "TPOT 3.9ms (was 2.9)", "--json", cwd=lab, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["status"] == "confirmed", result["notes"]
    diff = {c["id"]: c for c in json.loads(run_cli("diff", "--json", cwd=lab).stdout)["candidates"]}
    truth = load_truth(lab)
    assert [(diff[c["id"]]["file"], diff[c["id"]]["header"]) for c in result["culprits"]] == [
        (e.file, e.hunk) for e in truth.culprits
    ]
    dropped = {d["file"]: " ".join(d["evidence"]) for d in result["dropped"]}
    for never in (
        "vllm/v1/attention/backends/flashinfer.py",
        "vllm/model_executor/models/qwen2.py",
    ):
        assert f"{never} was not imported by any of the" in dropped[never]
    nccl = dropped["vllm/entrypoints/openai/api_server.py"]
    assert "NCCL_PROTO=LL is set but no worker process has it" in nccl
    assert "gpu_worker" in nccl  # the Ray worker, read from /proc after its start
    transcript = (Path(result["session_dir"]) / "transcript.jsonl").read_text()
    assert "server: vllm 0.8.5; attention FLASH_ATTN" in transcript
    assert "did not reach 0/1 GPU worker processes" in transcript
    assert repo_fingerprint(lab) == before
    assert only_main_worktree(lab)

    log = next((Path(result["session_dir"]) / "launches").glob("*/server-*.log"))
    paths = run_cli(
        "paths",
        "--log",
        str(log),
        "--gpu",
        "9.0",
        "--arch",
        "LlamaForCausalLM",
        "--json",
        *(c["file"] for c in diff.values()),
        cwd=lab,
    )
    assert paths.returncode == 0, paths.stderr
    found = {f["path"]: f["status"] for f in json.loads(paths.stdout)["files"]}
    assert found == {
        "vllm/v1/attention/backends/flash_attn.py": "on",
        "vllm/entrypoints/openai/api_server.py": "on",
        "vllm/v1/attention/backends/flashinfer.py": "off",
        "vllm/model_executor/models/qwen2.py": "off",
    }
    parsed = json.loads(run_cli("logs", "parse", "--json", str(log)).stdout)
    assert parsed["server"]["server"] == "vllm"
    assert parsed["server"]["details"]["startup"]["ray_copied_env"] == []
