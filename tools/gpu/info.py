"""The GPU a server ran on: vendor, compute capability, name, and where that fact came from.

Sources, each parsed defensively (garbage gives None, never an exception): an explicit value
(`paths --gpu sm120`), the node (`nvidia-smi --query-gpu=name,compute_cap`, or ROCm's tools),
and the server log (tools/gpu/log.py). The capability is kept as SGLang's `get_device_sm()`
number, major * 10 + minor (sm120 for 12.0, sm90 for 9.0; on ROCm torch reports gfx942 as 9.4).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel

from tools.errors import ToolError

Vendor = Literal["cuda", "hip", "npu"]

# NVIDIA's published compute capabilities (developer.nvidia.com/cuda-gpus), for sources that
# name the GPU without its capability (SGLang's MoE config lines carry only the name).
_SM_BY_NAME = [
    (re.compile(r"\bGB10\b"), 121),
    (re.compile(r"\bG?B300\b"), 103),
    (re.compile(r"\bG?B[12]00\b"), 100),
    (re.compile(r"RTX PRO \d+ Blackwell|RTX 50[6-9]0"), 120),
    (re.compile(r"\b(?:G?H[12]00|H800|H20)\b"), 90),
    (re.compile(r"\b(?:L40S?|L4|L20|RTX 6000 Ada|RTX 40[6-9]0)\b"), 89),
    (re.compile(r"\b(?:A100|A800|A30)\b"), 80),
    (re.compile(r"\b(?:A10G?|A40|RTX A6000|RTX 30[6-9]0)\b"), 86),
]
# AMD Instinct parts and their gfx targets (ROCm's documented ISA names).
_GFX_BY_NAME = [
    (re.compile(r"\bMI35[05]X?\b"), "gfx950"),
    (re.compile(r"\bMI3(?:00[AX]?|25X?)\b"), "gfx942"),
    (re.compile(r"\bMI2(?:10|50X?)\b"), "gfx90a"),
]
_GFX = re.compile(r"\bgfx(\d{1,2})([0-9a-f])([0-9a-f])\b")


class GpuInfo(BaseModel):
    vendor: Vendor | None = None
    sm: int | None = None  # major * 10 + minor, as SGLang's get_device_sm() returns it
    name: str | None = None
    arch: str | None = None  # the gfx target on ROCm
    cuda_version: str | None = None  # torch.version.cuda, when a source says ("12.8")
    source: str

    @property
    def major(self) -> int | None:
        return None if self.sm is None else self.sm // 10

    def describe(self) -> str:
        parts: list[str] = [self.vendor or "unknown vendor"]
        if self.sm is not None:
            parts.append(f"sm{self.sm} (compute capability {self.sm // 10}.{self.sm % 10})")
        if self.arch:
            parts.append(self.arch)
        if self.name:
            parts.append(self.name)
        return " ".join(parts)


def vendor_of_name(name: str) -> Vendor | None:
    if re.search(r"\b(NVIDIA|Tesla|Quadro|GeForce)\b", name):
        return "cuda"
    if re.search(r"\b(AMD|Instinct|Radeon)\b", name):
        return "hip"
    if re.search(r"\bAscend\b", name):
        return "npu"
    return None


def sm_of_name(name: str) -> int | None:
    if vendor_of_name(name) != "cuda":
        return None
    return next((sm for pattern, sm in _SM_BY_NAME if pattern.search(name)), None)


def gfx_of_name(name: str) -> str | None:
    return next((gfx for pattern, gfx in _GFX_BY_NAME if pattern.search(name)), None)


def sm_of_gfx(arch: str) -> int | None:
    """gfx942 -> 94: torch on ROCm reports the gfx major and minor as the capability."""
    found = _GFX.search(arch)
    return int(found.group(1)) * 10 + int(found.group(2), 16) if found else None


def from_name(name: str, source: str) -> GpuInfo | None:
    """What a device name alone says (vendor; capability from the published tables)."""
    name = " ".join(name.split())
    vendor = vendor_of_name(name)
    if vendor is None:
        return None
    arch = gfx_of_name(name) if vendor == "hip" else None
    sm = sm_of_name(name) if vendor == "cuda" else (sm_of_gfx(arch) if arch else None)
    return GpuInfo(vendor=vendor, sm=sm, name=name, arch=arch, source=source)


def parse_gpu_option(value: str) -> GpuInfo:
    """`--gpu`: sm120, sm_90a, 12.0, gfx942, cuda, hip/rocm, npu (one-line error otherwise)."""
    text = value.strip().lower()
    source = f"--gpu {value}"
    if found := re.fullmatch(r"sm_?(\d{2,3})[af]?", text):
        return GpuInfo(vendor="cuda", sm=int(found.group(1)), source=source)
    if found := re.fullmatch(r"(\d{1,2})\.(\d)", text):
        return GpuInfo(
            vendor="cuda", sm=int(found.group(1)) * 10 + int(found.group(2)), source=source
        )
    if _GFX.fullmatch(text):
        return GpuInfo(vendor="hip", arch=text, sm=sm_of_gfx(text), source=source)
    vendors: dict[str, Vendor] = {
        "cuda": "cuda",
        "nvidia": "cuda",
        "hip": "hip",
        "rocm": "hip",
        "amd": "hip",
        "npu": "npu",
        "ascend": "npu",
    }
    if text in vendors:
        return GpuInfo(vendor=vendors[text], source=source)
    raise ToolError(
        f"--gpu {value!r}: expected a compute capability (sm120, sm_90, 12.0), a "
        "gfx target (gfx942), or a vendor (cuda, hip, npu)"
    )


# One command for any node: NVIDIA's query, else ROCm's tools (their presence means HIP).
GPU_QUERY = (
    "if nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader 2>/dev/null; "
    "then :; elif { command -v rocminfo || command -v rocm-smi || command -v amd-smi; } "
    ">/dev/null 2>&1; "
    "then echo ROCM; rocminfo 2>/dev/null | grep -m1 -o 'gfx[0-9a-f]*'; true; "
    "else exit 1; fi"
)


def from_query_output(output: str, source: str) -> GpuInfo | None:
    """GPU_QUERY's output: `NVIDIA H200, 9.0` per GPU, or `ROCM` and maybe a gfx target.
    GPUs that disagree decide nothing (the server's ranks would differ)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if lines[:1] == ["ROCM"]:
        arch = next((line for line in lines[1:] if _GFX.fullmatch(line)), None)
        return GpuInfo(vendor="hip", arch=arch, sm=sm_of_gfx(arch) if arch else None, source=source)
    seen = set()
    for line in lines:
        found = re.fullmatch(r"(.+?),\s*(\d{1,2})\.(\d)", line)
        if found is None:
            return None
        seen.add((" ".join(found.group(1).split()), int(found.group(2)) * 10 + int(found.group(3))))
    if len(seen) != 1:
        return None
    name, sm = seen.pop()
    return GpuInfo(vendor="cuda", sm=sm, name=name, source=source)


def query_gpu(run: Callable[[str], tuple[int | None, str]], where: str) -> GpuInfo | None:
    """Ask a machine through `run(command) -> (exit code, output)`: a node's shell or here."""
    try:
        code, output = run(GPU_QUERY)
    except (OSError, subprocess.SubprocessError, ToolError):
        return None
    if code != 0:
        return None
    return from_query_output(output, f"nvidia-smi / rocminfo on {where}")


def query_here() -> GpuInfo | None:
    if not (
        shutil.which("nvidia-smi")
        or shutil.which("rocminfo")
        or shutil.which("rocm-smi")
        or shutil.which("amd-smi")
    ):
        return None

    def run(command: str) -> tuple[int | None, str]:
        done = subprocess.run(
            ["/bin/sh", "-c", command], capture_output=True, text=True, timeout=20
        )
        return done.returncode, done.stdout

    return query_gpu(run, "this machine")
