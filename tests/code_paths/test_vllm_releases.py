"""`debug-agent paths` on two real vLLM releases (0.8.5 and 0.34.0, downloaded at test time),
four server configurations each (tests/code_paths/vllm_cases.toml): FlashAttention on Hopper,
FlashInfer on Blackwell, an MLA model, an EAGLE3 draft; logs in each release's own format. For
each release: no file the server runs is called off-path, at least 95 % of the decided files are
right. The issue asks 85 % decided: 88 % (0.8.5) and 81 % (0.34.0) are measured, and the
bounds below keep them from falling (docs/real-runs.md says what stays unknown)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from tests.code_paths.release_source import Score, download, shared_folder
from tests.code_paths.vllm_cases import GPU_SM, VllmCase, vllm_cases
from tests.conftest import run_cli

RELEASES = sorted({c.release for c in vllm_cases()})


@cache
def _source(version: str, basetemp: Path) -> Path:
    return download(version, shared_folder(basetemp) / f"vllm-{version}", package="vllm")


def _judge(case: VllmCase, source: Path, folder: Path) -> dict[str, dict]:
    log = folder / f"{case.name}.log"
    log.write_text(case.log())
    arch = ["--arch", case.architectures[0]] if case.release == "0.8.5" else []
    done = run_cli(
        "paths",
        "--log",
        str(log),
        "--repo",
        str(source),
        "--gpu",
        GPU_SM[case.gpu],
        *arch,
        "--json",
        *case.truth,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return {f["path"]: f for f in json.loads(done.stdout)["files"]}


# CPU-bound for tens of seconds: never beside a test that judges real millisecond timings
@pytest.mark.usefixtures("many_processes")
@pytest.mark.parametrize("release", RELEASES)
def test_no_file_the_vllm_server_runs_is_called_off_path(
    release: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    source = _source(release, tmp_path_factory.getbasetemp())
    score = Score()
    for case in (c for c in vllm_cases() if c.release == release):
        score.add(case.name, case.truth, _judge(case, source, tmp_path_factory.mktemp(case.name)))
    assert score.right >= 0.95 * score.decided, (release, score)
    # the issue asks 85 % decided; measured 88 % (0.8.5: the arguments' selections, dead
    # ROCm helpers and a by-path loader now decide) and 86 % (0.34.0: also torch's build has
    # no XCCL off an XPU, and `vllm bench`'s modules run only under `vllm bench`); what stays
    # unknown is named by code inside functions (V0 backends the platform file names, the
    # quantization methods a quantized checkpoint would load)
    assert score.decided >= {"0.8.5": 0.85, "0.34.0": 0.85}[release] * score.files, (release, score)
