"""Execution-path evidence read from the real SGLang 0.5.23 source (downloaded at test time,
never committed) and a real startup log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.code_paths.lab_paths import lab_paths
from tests.code_paths.release_source import download, shared_folder
from tests.conftest import REPO_ROOT, run_cli

LOG = (
    REPO_ROOT
    / "tests"
    / "data"
    / "sglang-logs"
    / ("046-server-args-complete-kimi-k2.5-rocm-tp8-sglang-serve-noise.log")
)
ATTN = "python/sglang/srt/layers/attention/"


@pytest.fixture(scope="session")
def sglang_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return download("0.5.23", shared_folder(tmp_path_factory.getbasetemp()) / "sglang-0.5.23")


def test_registry_evidence_on_the_real_source(sglang_source: Path) -> None:
    assert LOG.exists(), f"the real logs are needed at {LOG}"
    done = run_cli(
        "paths",
        "--log",
        str(LOG),
        "--repo",
        str(sglang_source),
        "--json",
        ATTN + "flashinfer_mla_backend.py",
        ATTN + "triton_backend.py",
    )
    assert done.returncode == 0, done.stderr
    files = {Path(f["path"]).name: f for f in json.loads(done.stdout)["files"]}
    mla, triton = files["flashinfer_mla_backend.py"], files["triton_backend.py"]
    assert mla["status"] == "off" and triton["status"] == "on"
    assert any(
        "attention_registry.py:" in e and "register_attention_backend('flashinfer')" in e
        for e in mla["evidence"]
    )
    assert any("register_attention_backend('triton')" in e for e in triton["evidence"])
    assert any("builds triton" in e for e in mla["evidence"])


def test_model_files_follow_the_architecture(sglang_source: Path) -> None:
    done = run_cli(
        "paths",
        "--log",
        str(LOG),
        "--repo",
        str(sglang_source),
        "--arch",
        "DeepseekV3ForCausalLM",
        "--json",
        "python/sglang/srt/models/glm4_moe.py",
        "python/sglang/srt/models/deepseek_v2.py",
    )
    files = {Path(f["path"]).name: f["status"] for f in json.loads(done.stdout)["files"]}
    assert files == {"glm4_moe.py": "off", "deepseek_v2.py": "on"}


def test_paths_in_a_lab_uses_its_changed_files(seed_lab: Path, tmp_path: Path) -> None:
    files = lab_paths(seed_lab, tmp_path)
    assert files["flashinfer_mla_backend.py"] == "off"
    assert files["parallel_state.py"] == "on"  # the scheduler, a process every server starts


def test_not_an_sglang_tree(tmp_path: Path) -> None:
    done = run_cli("paths", "--repo", str(tmp_path), "x.py")
    assert done.returncode == 1 and "is not an SGLang source tree" in done.stderr


def test_an_older_layout_is_read_from_its_model_runner(tmp_path: Path) -> None:
    """SGLang 0.4.0 has no attention_registry.py: the backend is picked by branches on
    server_args.attention_backend in model_runner.py, which the same command reads."""
    source = download("0.4.0", tmp_path / "sglang-0.4.0")
    log = tmp_path / "server.log"
    log.write_text(
        "[2024-12-04 10:00:00] server_args=ServerArgs(model_path='meta-llama/"
        "Llama-3.1-8B-Instruct', attention_backend='triton', tp_size=1, "
        "enable_double_sparsity=False)\n"
    )
    attn = "sglang/srt/layers/attention/"
    done = run_cli(
        "paths",
        "--log",
        str(log),
        "--repo",
        str(source),
        "--json",
        attn + "flashinfer_backend.py",
        attn + "triton_backend.py",
        attn + "double_sparsity_backend.py",
    )
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
    done = run_cli(
        "paths",
        "--log",
        str(log),
        "--repo",
        str(source),
        "--json",
        attn + "double_sparsity_backend.py",
    )
    assert json.loads(done.stdout)["files"][0]["status"] == "unknown"  # the log cannot tell


def _paths(source: Path, log: Path, *args: str) -> dict[str, dict]:
    done = run_cli("paths", "--log", str(log), "--repo", str(source), "--json", *args)
    assert done.returncode == 0, done.stderr
    return {Path(f["path"]).name: f for f in json.loads(done.stdout)["files"]}


def test_modules_an_on_path_module_imports_are_on_path(sglang_source: Path) -> None:
    """triton_backend.py (selected) imports base_attn_backend.py and verify_mask.py at module
    level; the served model's file reaches dsa_backend.py through its attention mixins. The
    same run judges what only other models' files import (below)."""
    files = _paths(
        sglang_source,
        LOG,
        "--arch",
        "DeepseekV3ForCausalLM",
        ATTN + "base_attn_backend.py",
        ATTN + "verify_mask.py",
        ATTN + "dsa_backend.py",
        ATTN + "trtllm_mla_backend.py",
        ATTN + "flashinfer_mla_backend.py",
        *OTHER_MODELS_FILES,
    )
    _what_only_other_models_import_is_off(files)  # the same run: a `paths` run costs seconds
    base = files["base_attn_backend.py"]
    assert base["status"] == "on"
    assert base["evidence"][0].startswith(
        "chain from srt/layers/attention/triton_backend.py (the selected attention backend 'triton'"
    )
    assert any(
        e.startswith("srt/layers/attention/triton_backend.py:")
        and "imports srt/layers/attention/base_attn_backend.py (AttentionBackend)" in e
        for e in base["evidence"]
    )
    assert files["verify_mask.py"]["status"] == "on"
    dsa = " ".join(files["dsa_backend.py"]["evidence"])
    assert files["dsa_backend.py"]["status"] == "on"  # a helper of it runs in the MLA forward
    assert "chain from srt/models/deepseek_v2.py (the target model" in dsa
    assert "imports srt/layers/attention/dsa_backend.py (prepare_kv_for_attention)" in dsa
    # importing dsa_backend runs its own module-level imports: the backends it builds on are
    # imported too, unselected or not (their module-level code runs), with the chain quoted
    for name, via in (
        ("trtllm_mla_backend.py", "dsa_backend.py"),
        ("flashinfer_mla_backend.py", "trtllm_mla_backend.py"),
    ):
        evidence = files[name]["evidence"]
        assert files[name]["status"] == "on", files[name]
        assert any(
            e.startswith(f"srt/layers/attention/{via}:")
            and f"imports srt/layers/attention/{name}" in e
            for e in evidence
        ), evidence


def test_a_gpu_guard_in_the_registry_is_decided(sglang_source: Path, tmp_path: Path) -> None:
    """The dsv4 factory picks its module by `if _is_npu: ... elif _is_hip: ... else: ...`."""
    log = tmp_path / "server.log"
    log.write_text(
        "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='deepseek-ai/"
        "DeepSeek-V4', attention_backend='dsv4', tp_size=8)\n"
    )
    hip, cuda = ATTN + "deepseek_v4_backend_hip_radix.py", ATTN + "deepseek_v4_trtllm_backend.py"
    files = _paths(sglang_source, log, "--gpu", "sm120", hip, cuda)
    radix = files["deepseek_v4_backend_hip_radix.py"]
    assert radix["status"] == "off"
    assert any(
        "uses srt/layers/attention/deepseek_v4_backend_hip_radix.py only if not _is_npu "
        "and _is_hip" in e
        for e in radix["evidence"]
    )
    assert "`_is_hip` is `is_hip()` (srt/layers/attention/attention_registry.py:" in " ".join(
        radix["evidence"]
    )
    assert "the GPU: cuda sm120 (compute capability 12.0) (--gpu sm120)" in radix["evidence"]
    assert files["deepseek_v4_trtllm_backend.py"]["status"] == "on"
    # the same log with the ROCm log's lines: the GPU comes from the log, hip
    log.write_text(LOG.read_text(errors="replace").splitlines()[0] + "\n" + log.read_text())
    files = _paths(sglang_source, log, hip, cuda)
    assert files["deepseek_v4_backend_hip_radix.py"]["status"] == "on"
    assert files["deepseek_v4_trtllm_backend.py"]["status"] == "off"
    assert any(
        "line 1: [aiter] import" in e for e in files["deepseek_v4_trtllm_backend.py"]["evidence"]
    )
    done = run_cli("paths", "--log", str(log), "--repo", str(sglang_source), "--gpu", "sm12x", hip)
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "--gpu 'sm12x'" in done.stderr


def test_an_import_under_a_gpu_guard_follows_the_gpu(sglang_source: Path) -> None:
    """deepseek_v2.py imports its ROCm activation module only `if _is_hip:`, with `_is_hip`
    imported from deepseek_common/utils.py: on the ROCm log it is on-path, on sm120 not."""
    hip_act = "python/sglang/srt/models/deepseek_common/amd/deepseek_v2_hip_act.py"
    rocm = _paths(sglang_source, LOG, "--arch", "DeepseekV3ForCausalLM", hip_act)
    evidence = " ".join(rocm["deepseek_v2_hip_act.py"]["evidence"])
    assert rocm["deepseek_v2_hip_act.py"]["status"] == "on"
    assert (
        "srt/models/deepseek_v2.py:" in evidence
        and "under `if _is_hip` (true on this GPU)" in evidence
    )
    cuda = _paths(sglang_source, LOG, "--arch", "DeepseekV3ForCausalLM", "--gpu", "sm120", hip_act)[
        "deepseek_v2_hip_act.py"
    ]
    assert cuda["status"] == "unknown"  # not reached; nothing proves no other module imports it
    assert any(
        e.startswith("srt/models/deepseek_v2.py:")
        and e.endswith("imports it only if _is_hip, which is false on this GPU")
        for e in cuda["evidence"]
    )
    assert any(
        e.startswith("`_is_hip` is `is_hip()` (srt/models/deepseek_common/utils.py:")
        for e in cuda["evidence"]
    )


def test_the_http_server_is_a_root_when_the_log_shows_it_ran(
    sglang_source: Path, tmp_path: Path
) -> None:
    """`The server is fired up and ready to roll!` is printed by srt/entrypoints/http_server.py
    alone: what that module imports at module level runs (an Engine in a script prints the
    server_args too, and never this). Without the line the file is undecided (no chain from
    the other roots reaches it): the evidence names the line as the chain's root."""
    ollama = "python/sglang/srt/entrypoints/ollama/serving.py"
    log = tmp_path / "server.log"
    log.write_text(
        LOG.read_text() + "[2026-02-26 16:41:07] The server is fired up and ready to roll!\n"
    )
    done = run_cli("paths", "--log", str(log), "--repo", str(sglang_source), "--json", ollama)
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)["files"][0]
    assert verdict["status"] == "on"
    assert verdict["evidence"][0].startswith(
        "chain from srt/entrypoints/http_server.py (the HTTP server, which the log shows ran (line "
    )
    assert any("http_server.py:" in e and "ollama/serving.py" in e for e in verdict["evidence"])


def test_the_module_that_printed_server_args_is_a_root(sglang_source: Path) -> None:
    """In 0.5.23 only srt/entrypoints/engine.py logs `server_args=...` (an Engine in a script
    or the HTTP server's launch, either way): it ran, and so did its module-level imports (the
    chat template manager among them)."""
    files = [
        "python/sglang/srt/entrypoints/engine.py",
        "python/sglang/srt/parser/template_manager.py",
    ]
    done = run_cli("paths", "--log", str(LOG), "--repo", str(sglang_source), "--json", *files)
    assert done.returncode == 0, done.stderr
    engine, templates = json.loads(done.stdout)["files"]
    assert engine["status"] == templates["status"] == "on", (engine, templates)
    root = "chain from srt/entrypoints/engine.py (it printed the log's server_args line (line "
    assert engine["evidence"][0].startswith(root), engine["evidence"]
    assert "srt/entrypoints/engine.py:311, the only module of the package" in engine["evidence"][0]
    assert templates["evidence"][0].startswith(root), templates["evidence"]


OTHER_MODELS_FILES = (
    "python/sglang/srt/layers/muse_spark/muse_spark_layers.py",
    "python/sglang/srt/multimodal/inkling/image_processing.py",
    "python/sglang/srt/models/inkling_common/dense_mlp.py",
    "python/sglang/srt/layers/hyperconnection.py",
)


def _what_only_other_models_import_is_off(files: dict[str, dict]) -> None:
    """The model registry imports every model file and the processor registry every processor,
    but the server builds only the served model's classes: a layer only MuseSpark's files
    import, and the Inkling image code only its processor imports, are off. A module an on-path
    function imports lazily (the LoRA manager's Inkling MLP) stays undecided; so does one only
    Qwen4-Exp's model file imports, since code the server may run names that file (the rust
    server's multimodal code imports the Qwen-VL processor in a function, which names it)."""
    layers = files["muse_spark_layers.py"]
    assert layers["status"] == "off", layers
    assert (
        "srt/models/muse_spark.py:76 imports it, but srt/models/muse_spark.py is a file of "
        "models the server does not serve"
    ) in " ".join(layers["evidence"])
    assert files["image_processing.py"]["status"] == "off", files["image_processing.py"]
    assert files["dense_mlp.py"]["status"] == "unknown", files["dense_mlp.py"]
    assert files["hyperconnection.py"]["status"] == "unknown", files["hyperconnection.py"]
