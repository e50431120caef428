"""`debug-agent paths` on three real SGLang releases (downloaded at test time), four server
configurations each, logs in each release's own format (tests/code_paths/release_cases.toml):
EAGLE, EAGLE3 and MTP drafts; fa3, flashinfer, flashmla, triton, aiter and trtllm_mla backends;
Hopper, Blackwell, an RTX PRO 6000 (sm120) and MI300X; and two more releases held out (their
configurations written after the engine's changes, never tuned for). For each release: no file
the server runs is called off-path, at least 95 % of the decided files are right, at least
85 % are decided."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from tests.code_paths.release_cases import Case, cases
from tests.code_paths.release_source import Score, download, shared_folder
from tests.conftest import run_cli

RELEASES = sorted({c.release for c in cases()})


@cache
def _source(version: str, basetemp: Path) -> Path:
    return download(version, shared_folder(basetemp) / f"sglang-{version}")


def _judge(case: Case, source: Path, folder: Path) -> dict[str, dict]:
    log = folder / f"{case.name}.log"
    log.write_text(case.log(source / "sglang"))
    done = run_cli(
        "paths", "--log", str(log), "--repo", str(source), "--json", *case.truth, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return {f["path"]: f for f in json.loads(done.stdout)["files"]}


# CPU-bound for tens of seconds: never beside a test that judges real millisecond timings
@pytest.mark.usefixtures("many_processes")
@pytest.mark.parametrize("release", RELEASES)
def test_no_file_the_server_runs_is_called_off_path(
    release: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    source = _source(release, tmp_path_factory.getbasetemp())
    score = Score()
    for case in (c for c in cases() if c.release == release):
        score.add(case.name, case.truth, _judge(case, source, tmp_path_factory.mktemp(case.name)))
    assert score.right >= 0.95 * score.decided, (release, score)
    assert score.decided >= 0.85 * score.files, (release, score)


def test_the_seed_story_draft_model_is_on_path(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Kimi-K2.5 on triton with an EAGLE-3 draft, on sm120: the draft's model file and the
    Llama file it builds on are on, with their chains; the flashinfer MLA backend is off."""
    case = next(c for c in cases() if c.name == "kimi-k2.5-triton-eagle3-sm120")
    source = _source(case.release, tmp_path_factory.getbasetemp())
    found = _judge(case, source, tmp_path_factory.mktemp("seed"))
    eagle3 = found["sglang/srt/models/llama_eagle3.py"]
    llama = found["sglang/srt/models/llama.py"]
    assert eagle3["status"] == "on" and llama["status"] == "on"
    assert any("the draft model LlamaForCausalLMEagle3" in e for e in eagle3["evidence"])
    assert any(
        "srt/models/llama_eagle3.py:" in e and "imports srt/models/llama.py" in e
        for e in llama["evidence"]
    ), llama["evidence"]
    mla = found["sglang/srt/layers/attention/flashinfer_mla_backend.py"]
    assert mla["status"] == "off", mla
    worker = found["sglang/srt/speculative/eagle_worker.py"]
    assert worker["status"] == "on"
    assert any("create_worker" in e and "holds" in e for e in worker["evidence"]), worker
