"""Execution-path evidence read from the real SGLang 0.5.23 source (downloaded at test time,
never committed) and a real startup log."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, run_cli

LOG = REPO_ROOT / "tests" / "data" / "sglang-logs" / (
    "046-server-args-complete-kimi-k2.5-rocm-tp8-sglang-serve-noise.log")
ATTN = "python/sglang/srt/layers/attention/"


def _download(version: str, folder: Path) -> Path:
    """The real SGLang source of `version` (its attention, model and runner code) in `folder`."""
    wheels = folder / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "download", f"sglang=={version}", "--no-deps",
                    "-q", "-d", str(wheels)], check=True, timeout=600)
    wheel = next(wheels.glob(f"sglang-{version}-*.whl"))
    source = folder / "source"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(source, [n for n in z.namelist()
                              if n.startswith(("sglang/srt/layers/attention/",
                                               "sglang/srt/models/",
                                               "sglang/srt/model_executor/"))])
    return source


@pytest.fixture(scope="session")
def sglang_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _download("0.5.23", tmp_path_factory.mktemp("sglang-0.5.23"))


def test_registry_evidence_on_the_real_source(sglang_source: Path) -> None:
    assert LOG.exists(), f"the real logs are needed at {LOG}"
    done = run_cli("paths", "--log", str(LOG), "--repo", str(sglang_source), "--json",
                   ATTN + "flashinfer_mla_backend.py", ATTN + "triton_backend.py")
    assert done.returncode == 0, done.stderr
    files = {Path(f["path"]).name: f for f in json.loads(done.stdout)["files"]}
    mla, triton = files["flashinfer_mla_backend.py"], files["triton_backend.py"]
    assert mla["status"] == "off" and triton["status"] == "on"
    assert any("attention_registry.py:" in e and "register_attention_backend('flashinfer')" in e
               for e in mla["evidence"])
    assert any("register_attention_backend('triton')" in e for e in triton["evidence"])
    assert any("attention_backend='triton'" in e for e in mla["evidence"])


def test_model_files_follow_the_architecture(sglang_source: Path) -> None:
    done = run_cli("paths", "--log", str(LOG), "--repo", str(sglang_source), "--arch",
                   "DeepseekV3ForCausalLM", "--json", "python/sglang/srt/models/glm4_moe.py",
                   "python/sglang/srt/models/deepseek_v2.py")
    files = {Path(f["path"]).name: f["status"] for f in json.loads(done.stdout)["files"]}
    assert files == {"glm4_moe.py": "off", "deepseek_v2.py": "on"}


def test_paths_in_a_lab_uses_its_changed_files(seed_lab: Path, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("[2026-01-01 00:00:00] server_args=ServerArgs(model_path='moonshotai/Kimi-K2.5'"
                   ", attention_backend='triton', tp_size=8)\n")
    done = run_cli("paths", "--log", str(log), "--json", cwd=seed_lab)
    assert done.returncode == 0, done.stderr
    files = {Path(f["path"]).name: f["status"] for f in json.loads(done.stdout)["files"]}
    assert files["flashinfer_mla_backend.py"] == "off"
    assert files["parallel_state.py"] == "unknown"


def test_not_an_sglang_tree(tmp_path: Path) -> None:
    done = run_cli("paths", "--repo", str(tmp_path), "x.py")
    assert done.returncode == 1 and "is not an SGLang source tree" in done.stderr


def test_an_older_layout_is_read_from_its_model_runner(tmp_path: Path) -> None:
    """SGLang 0.4.0 has no attention_registry.py: the backend is picked by branches on
    server_args.attention_backend in model_runner.py, which the same command reads."""
    source = _download("0.4.0", tmp_path)
    log = tmp_path / "server.log"
    log.write_text("[2024-12-04 10:00:00] server_args=ServerArgs(model_path='meta-llama/"
                   "Llama-3.1-8B-Instruct', attention_backend='triton', tp_size=1, "
                   "enable_double_sparsity=False)\n")
    attn = "sglang/srt/layers/attention/"
    done = run_cli("paths", "--log", str(log), "--repo", str(source), "--json",
                   attn + "flashinfer_backend.py", attn + "triton_backend.py",
                   attn + "double_sparsity_backend.py")
    assert done.returncode == 0, done.stderr
    files = {Path(f["path"]).name: f for f in json.loads(done.stdout)["files"]}
    assert files["flashinfer_backend.py"]["status"] == "off"
    assert files["triton_backend.py"]["status"] == "on"
    assert files["double_sparsity_backend.py"]["status"] == "off"  # only if enabled
    evidence = " ".join(files["flashinfer_backend.py"]["evidence"])
    assert "model_runner.py:" in evidence
    assert "if self.server_args.attention_backend == 'flashinfer' uses" in evidence
    triton = " ".join(files["triton_backend.py"]["evidence"])
    assert "only if not self.server_args.enable_double_sparsity" in triton
    assert "enable_double_sparsity=False" in triton
    log.write_text(log.read_text().replace(", enable_double_sparsity=False", ""))
    done = run_cli("paths", "--log", str(log), "--repo", str(source), "--json",
                   attn + "double_sparsity_backend.py")
    assert json.loads(done.stdout)["files"][0]["status"] == "unknown"  # the log cannot tell
