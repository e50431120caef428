"""The GPU as a server log shows it.

SGLang prints no GPU line of its own at startup; what a log can carry, from real logs:
- SGLang's fused-MoE config lines name the device: `...device_name=NVIDIA_H200,dtype=...json`;
- PyTorch's warnings: `Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.` and
  `NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible ...`;
- `python -m sglang.check_env` output pasted with it: `GPU 0,1: NVIDIA H200`,
  `GPU 0,1 Compute Capability: 9.0`, `PyTorch: 2.8.0+cu129`;
- ROCm servers log `device='cuda'` in server_args too, but their lines mention ROCm, aiter
  (`[aiter] ...`, `INFO:aiter:`), gfx targets or AMD Instinct parts; NPU servers log
  `device='npu'`.
Sources that disagree about the vendor or the capability decide nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TypeVar

from tools.gpu.info import GpuInfo, from_name, sm_of_gfx

_FOUND_GPU = re.compile(r"Found GPU\d+ (.+?) which is of cuda capability (\d{1,2})\.(\d)")
_SM_WARNING = re.compile(r"((?:NVIDIA|Tesla|Quadro)\b.*?) with CUDA capability sm_(\d{2,3})\b")
_CHECK_ENV_NAME = re.compile(r"^GPU [\d,]+: (.+)$")
_CHECK_ENV_CC = re.compile(r"^GPU [\d,]+ Compute Capability: (\d{1,2})\.(\d)\s*$")
_DEVICE_NAME = re.compile(r"device_name=([A-Za-z0-9_\-]+)")
_TORCH_CUDA = re.compile(r"\b(?:torch|PyTorch)\S*[ :=]+\S*\+cu(\d{2})(\d)\b")
_GFX = re.compile(r"\bgfx(?:9[0-9a-f]{2}|1[0-2][0-9a-f]{2})\b")
_ROCM = re.compile(r"\bROCm\b|^\[aiter\]|\bINFO:aiter:|\bAMD Instinct\b|USE_ROCM_")
_NPU = re.compile(r"\bAscend\d*\b|\btorch_npu\b")
_ARGS_NPU = re.compile(r"""\bdevice['"]?\s*[=:]\s*['"]npu['"]""")  # ServerArgs or dict repr
T = TypeVar("T")
_PREFIX = re.compile(r"^(?:\(\w+ pid=\d+[^)]*\) )?\[\d{4}-\d\d-\d\d [\d:.]+[^\]]*\] ")


def _facts(line: str) -> Iterator[tuple[GpuInfo, re.Match[str]]]:
    """Each fact one line states, with the match that states it."""
    body = _PREFIX.sub("", line).strip()
    for pattern in (_FOUND_GPU, _SM_WARNING):
        if found := pattern.search(body):
            named = from_name(found.group(1), "")
            digits = found.groups()[1:]
            yield (
                GpuInfo(
                    vendor="cuda",
                    sm=int("".join(digits)),
                    name=named.name if named else None,
                    source="",
                ),
                found,
            )
    if (found := _CHECK_ENV_NAME.match(body)) and (named := from_name(found.group(1), "")):
        yield named, found
    if found := _CHECK_ENV_CC.match(body):
        yield GpuInfo(sm=int(found.group(1)) * 10 + int(found.group(2)), source=""), found
    if (found := _DEVICE_NAME.search(body)) and (
        named := from_name(found.group(1).replace("_", " "), "")
    ):
        yield named, found
    if found := _TORCH_CUDA.search(body):
        yield (
            GpuInfo(vendor="cuda", cuda_version=f"{found.group(1)}.{found.group(2)}", source=""),
            found,
        )
    if found := _GFX.search(body):
        yield (
            GpuInfo(vendor="hip", arch=found.group(0), sm=sm_of_gfx(found.group(0)), source=""),
            found,
        )
    elif found := _ROCM.search(body):
        yield GpuInfo(vendor="hip", source=""), found
    if found := _NPU.search(body):
        yield GpuInfo(vendor="npu", source=""), found


def _quote(found: re.Match[str], around: int = 50) -> str:
    """The matched words with some of their line, for the evidence."""
    text = found.string
    start, end = max(0, found.start() - around), min(len(text), found.end() + around)
    return f"{'...' if start else ''}{text[start:end]}{'...' if end < len(text) else ''}"


def _one(values: set[T]) -> T | None:
    return next(iter(values)) if len(values) == 1 else None


def gpu_from_log(text: str, where: str) -> GpuInfo | None:
    """The GPU the log shows, with the lines it comes from quoted; None if it shows none."""
    found: list[tuple[int, str, GpuInfo]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if "server_args=" in line:  # only its device field: the rest is paths and names
            if npu := _ARGS_NPU.search(line):
                found.append((number, _quote(npu), GpuInfo(vendor="npu", source="")))
            continue
        found += [(number, _quote(match), fact) for fact, match in _facts(line)]
    if not found:
        return None
    facts = [f for _, _, f in found]
    vendors = {f.vendor for f in facts if f.vendor}
    sms = {f.sm for f in facts if f.sm is not None}
    if len(vendors) > 1 or len(sms) > 1:
        return None  # the log contradicts itself: nothing is decided from it
    quotes: dict[str, str] = {}  # one per distinct text, the first two
    for number, text, _ in found:
        if text not in quotes and len(quotes) < 2:
            quotes[text] = f"{where} line {number}: {text}"
    return GpuInfo(
        vendor=_one(vendors),
        sm=_one(sms),
        name=_one({f.name for f in facts if f.name}),
        arch=_one({f.arch for f in facts if f.arch}),
        cuda_version=_one({f.cuda_version for f in facts if f.cuda_version}),
        source="; ".join(quotes.values()),
    )
