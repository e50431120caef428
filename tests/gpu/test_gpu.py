"""The GPU from a log, nvidia-smi or --gpu, and SGLang's guards decided on it."""

from __future__ import annotations

import ast

import pytest

from tests.conftest import REPO_ROOT
from tools.code_paths.imports import source_lookup
from tools.errors import ToolError
from tools.gpu.guards import decide, no_names
from tools.gpu.info import GpuInfo, from_query_output, parse_gpu_option
from tools.gpu.log import gpu_from_log

LOGS = REPO_ROOT / "tests" / "data" / "sglang-logs"
SM120 = GpuInfo(vendor="cuda", sm=120, source="test")
SM121 = GpuInfo(vendor="cuda", sm=121, source="test")
SM100 = GpuInfo(vendor="cuda", sm=100, source="test")
SM90 = GpuInfo(vendor="cuda", sm=90, source="test")
MI355 = GpuInfo(vendor="hip", arch="gfx950", sm=95, source="test")
HIP = GpuInfo(vendor="hip", source="test")
NOTHING = GpuInfo(source="test")


@pytest.mark.parametrize(
    "name",
    [
        "042-server-args-complete-glm5-fp8-rocm-tp8-triton-nsa-warnings.log",
        "043-multi-rank-cuda-graph-capture-crash-rocm-aiter-noise.log",
        "046-server-args-complete-kimi-k2.5-rocm-tp8-sglang-serve-noise.log",
    ],
)
def test_real_rocm_logs_say_hip_although_server_args_say_cuda(name: str) -> None:
    text = (LOGS / name).read_text(errors="replace")
    assert "device='cuda'" in text or "server_args=" not in text
    gpu = gpu_from_log(text, "log")
    assert gpu is not None and gpu.vendor == "hip" and gpu.sm is None
    assert gpu.source.startswith("log line ") and ("ROCm" in gpu.source or "aiter" in gpu.source)


@pytest.mark.parametrize(
    ("text", "vendor", "sm", "name"),
    [
        (
            "[2026-01-01 00:00:00 TP0] Using default MoE kernel config. Performance might be "
            "sub-optimal! Config file not found at "
            "/sgl/configs/triton_3_4_0/E=384,N=256,device_name="
            "NVIDIA_H200,dtype=fp8_w8a8.json, you can create them with https://github.com/x",
            "cuda",
            90,
            "NVIDIA H200",
        ),
        (
            "UserWarning: Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.",
            "cuda",
            121,
            "NVIDIA GB10",
        ),
        (
            "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the "
            "current "
            "PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_50 "
            "sm_60 "
            "sm_70 sm_75 sm_80 sm_86 sm_90.",
            "cuda",
            120,
            "NVIDIA GeForce RTX 5090",
        ),
        (
            "GPU 0,1,2,3: NVIDIA B200\nGPU 0,1,2,3 Compute Capability: 10.0\nPyTorch: 2.7.1+cu128",
            "cuda",
            100,
            "NVIDIA B200",
        ),
        (
            "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='x', device='npu', tp_size=2)",
            "npu",
            None,
            None,
        ),
        ("[2026-01-01 00:00:00] WARNING: the kernel for gfx942 is slow", "hip", 94, None),
    ],
)
def test_log_lines_that_show_the_gpu(
    text: str, vendor: str, sm: int | None, name: str | None
) -> None:
    gpu = gpu_from_log(text, "log")
    assert gpu is not None and (gpu.vendor, gpu.sm, gpu.name) == (vendor, sm, name)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\x00\xff\ufffd garbage sm_ capability",
        "server_args=ServerArgs(model_path='NVIDIA_H200')",
        "GPU 0: NVIDIA H200\nGPU 0 Compute Capability: 10.0",  # contradicts itself
        "[aiter] import\n[x] Found GPU0 NVIDIA H100 which is of cuda capability 9.0.",
    ],
)
def test_logs_that_decide_nothing(text: str) -> None:
    assert gpu_from_log(text, "log") is None


def test_nvidia_smi_and_rocm_answers() -> None:
    h200 = from_query_output("NVIDIA H200, 9.0\n", "nvidia-smi")  # as an H200 node answered
    assert h200 is not None and (h200.vendor, h200.sm, h200.name) == ("cuda", 90, "NVIDIA H200")
    smi = "NVIDIA RTX PRO 6000 Blackwell Server Edition, 12.0\n" * 8
    gpu = from_query_output(smi, "nvidia-smi")
    assert gpu is not None and (gpu.vendor, gpu.sm) == ("cuda", 120)
    assert "compute capability 12.0" in gpu.describe()
    rocm = from_query_output("ROCM\ngfx942\n", "rocminfo")
    assert rocm is not None and (rocm.vendor, rocm.arch, rocm.sm) == ("hip", "gfx942", 94)
    for garbage in (
        "",
        "NVIDIA H200, 9.0\nNVIDIA B200, 10.0\n",
        "No devices were found",
        "\x00\x01",
        "NVIDIA H200, nine",
    ):
        assert from_query_output(garbage, "nvidia-smi") is None


@pytest.mark.parametrize(
    ("value", "vendor", "sm"),
    [
        ("sm120", "cuda", 120),
        ("sm_90a", "cuda", 90),
        ("12.1", "cuda", 121),
        ("SM100", "cuda", 100),
        ("gfx950", "hip", 95),
        ("rocm", "hip", None),
        ("npu", "npu", None),
        ("cuda", "cuda", None),
    ],
)
def test_gpu_option(value: str, vendor: str, sm: int | None) -> None:
    gpu = parse_gpu_option(value)
    assert (gpu.vendor, gpu.sm) == (vendor, sm) and gpu.source == f"--gpu {value}"


@pytest.mark.parametrize("value", ["", "sm", "12", "banana", "sm_1200", "1.2.3", "gfx"])
def test_gpu_option_garbage_is_one_line(value: str) -> None:
    with pytest.raises(ToolError, match="--gpu"):
        parse_gpu_option(value)


def _decide(test: str, gpu: GpuInfo, module: str = "") -> bool | None:
    lookup = source_lookup(module, None) if module else no_names
    return decide(ast.parse(test, mode="eval").body, lookup, gpu).value


@pytest.mark.parametrize(
    ("test", "gpu", "expected"),
    [
        ("is_sm120_supported()", SM120, True),
        ("is_sm120_supported()", SM121, True),  # major 12: sm120 and sm121
        ("is_sm120()", SM121, False),  # exactly 12.0
        ("is_sm100_supported()", SM120, False),
        ("is_sm100_supported()", SM100, True),
        ("is_sm100_supported() or is_sm120_supported()", SM120, True),
        ("is_blackwell_supported()", SM121, True),
        ("is_blackwell()", SM90, False),
        ("is_hopper_with_cuda_12_3()", SM120, False),
        ("is_sm90_supported()", SM90, None),  # needs CUDA >= 12.3, which an H100 need not have
        ("is_sm90_supported()", SM90.model_copy(update={"cuda_version": "12.4"}), True),
        ("get_device_capability() >= (9, 0)", SM120, True),
        ("torch.cuda.get_device_capability()[0] == 10", SM120, False),
        ("get_device_sm() >= 90", SM90, True),
        ("get_device_sm() // 10 == 12", SM121, True),
        ("get_platform().is_sm100", SM100, True),
        ("not is_hip() and is_cuda()", SM120, True),
        ("is_hip()", MI355, True),
        ("is_sm100_supported()", HIP, False),  # is_cuda() is false on ROCm
        ("is_gfx95_supported()", MI355, True),
        ("get_device_capability() >= (9, 0)", HIP, None),  # ROCm's capability not known
        ("is_npu()", NOTHING, None),
        ("get_bool_env_var('SGLANG_USE_AITER') and is_hip()", SM120, False),
        ("get_bool_env_var('SGLANG_USE_AITER') or is_hip()", SM120, None),
        ("torch.version.hip is not None", MI355, True),
        ("server_args.enable_dp_attention", SM120, None),  # no GPU fact: never decided
        ("1 == 1", SM120, None),
    ],
)
def test_guards(test: str, gpu: GpuInfo, expected: bool | None) -> None:
    assert _decide(test, gpu) is expected


def test_module_level_aliases() -> None:
    module = (
        "from sglang.srt.utils import is_hip, is_sm100_supported\n"
        "_is_hip = is_hip()\n_is_sm100_supported = is_sm100_supported()\n"
        "_use_aiter = get_bool_env_var('SGLANG_USE_AITER') and _is_hip\n"
        "if _is_hip:\n    _maybe = True\n"
    )
    assert _decide("_is_sm100_supported", SM120, module) is False
    assert _decide("not _use_aiter", SM120, module) is True
    assert _decide("_use_aiter", MI355, module) is None
    assert _decide("_maybe", SM120, module) is None  # bound under a branch: no single value
    found = decide(ast.parse("_use_aiter", mode="eval").body, source_lookup(module, None), SM120)
    assert found.notes == [
        "`_is_hip` is `is_hip()` (this file:2)",
        "`_use_aiter` is `get_bool_env_var('SGLANG_USE_AITER') and _is_hip` (this file:4)",
    ]


def test_facts_with_a_gpu_survive_a_checkpoint() -> None:
    import sqlite3

    from agent.checkpoints import saver
    from agent.relevance import Facts

    serde = saver(sqlite3.connect(":memory:")).serde
    facts = Facts(architectures=["X"], gpu=SM120)
    assert serde.loads_typed(serde.dumps_typed({"facts": facts}))["facts"] == facts
    older = Facts.model_validate({"architectures": ["X"]})  # a checkpoint from before the field
    assert older.gpu is None
