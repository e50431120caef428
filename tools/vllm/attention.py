"""vLLM's attention-backend lines, read into the backend's registry name.

The forms (vllm/platforms/cuda.py of each release; tests/fixtures/vllm_logs/):
- 0.8 V1: `Using Flash Attention backend on V1 engine.` (FlashInfer, Triton, FlashMLA, Triton MLA);
  about 0.9.1: `Using FlashInfer backend on V1 engine by default for Blackwell (SM 10.0) GPUs.`;
- 0.8 V0: the same names without "on V1 engine", and `Using XFormers backend.`;
- 0.10+ auto: `Using FLASH_ATTN attention backend out of potential backends: [...]`;
- 0.10+ forced: `Using AttentionBackendEnum.FLASHINFER backend.` (older: `_Backend.X`);
- ROCm: `... Overriding with TRITON_ATTN out of potential backends: [...]`.
Lines that name another kind of backend (MLA prefill, a vision encoder's, MoE kernels,
all-reduce, the Transformers modeling backend) are not the decoder's and are told apart.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

Kind = Literal["decoder", "mla_prefill", "vision"]
MAX_CHARS = 4096  # a selection line is short: a longer one is something else, read no further

# 0.8's spoken names -> the `_Backend` / AttentionBackendEnum name the registry uses
SPOKEN = {
    "flash attention": "FLASH_ATTN",
    "flashattention": "FLASH_ATTN",
    "flashinfer": "FLASHINFER",
    "triton": "TRITON_ATTN",
    "flashmla": "FLASHMLA",
    "triton mla": "TRITON_MLA",
    "xformers": "XFORMERS",
    "torch sdpa": "TORCH_SDPA",
    "rocm flash attention": "ROCM_FLASH",
    "rocmflashattention": "ROCM_FLASH",
    "rocm attention": "ROCM_ATTN",
    "cutlass mla": "CUTLASS_MLA",
    "flashinfer mla": "FLASHINFER_MLA",
    "flex attention": "FLEX_ATTENTION",
    "pallas": "PALLAS",
    "aiter mla": "ROCM_AITER_MLA",
}
_ENUM = re.compile(r"(?:AttentionBackendEnum|_Backend)\.([A-Z][A-Z0-9_]*)")
_OUT_OF = re.compile(
    r"\bUsing (?P<name>[A-Z][A-Z0-9_]*) attention backend"
    r" out of potential backends: \[(?P<all>[^\]]*)\]"
)
_OVERRIDE = re.compile(r"Overriding with (?P<name>[A-Z][A-Z0-9_]*) out of potential backends")
_FORCED = re.compile(
    r"\bUsing (?:AttentionBackendEnum|_Backend)\.(?P<name>[A-Z][A-Z0-9_]*) (?:backend|for)\b"
)
_SPOKEN_LINE = re.compile(
    r"\bUsing (?P<name>[A-Za-z][\w -]{1,40}?) backend(?P<v1> on V1 engine)?"
    r"(?: by default.*?)?\.\s*$"
)
_MLA_PREFILL = re.compile(r"\bUsing (?P<name>\S+) MLA prefill backend")
_VISION = re.compile(r"vit attention|MMEncoderAttention|multimodal encoder", re.I)
_NOT_ATTENTION = re.compile(
    r"MoE|all-reduce|allreduce|modeling backend|Transformers|sampl|kernel", re.I
)


class AttentionLine(BaseModel):
    line: int
    process: str
    backend: str  # the registry's name: FLASH_ATTN, FLASHINFER, FLASHMLA, TRITON_MLA...
    kind: Kind
    said: str  # the message as printed
    candidates: list[str] = []  # "out of potential backends: [...]"
    engine: str | None = None  # "V1" where the line says "on V1 engine"


def _name(text: str) -> str:
    enum = _ENUM.fullmatch(text)
    if enum:
        return enum.group(1)
    key = text.strip().lower()
    return SPOKEN.get(key, re.sub(r"[\s-]+", "_", text.strip()).upper())


def _names(listed: str) -> list[str]:
    return [_name(n.strip(" '\"")) for n in listed.split(",") if n.strip(" '\"")]


def attention_line(number: int, process: str, message: str) -> AttentionLine | None:
    """The backend a line says was chosen, or None when it says none."""
    if len(message) > MAX_CHARS or (
        "backend" not in message.lower() and "Overriding with" not in message
    ):
        return None
    found = _MLA_PREFILL.search(message)
    if found:
        return AttentionLine(
            line=number,
            process=process,
            backend=_name(found.group("name")),
            kind="mla_prefill",
            said=message,
        )
    kind: Kind = "vision" if _VISION.search(message) else "decoder"
    for pattern in (_OUT_OF, _OVERRIDE):
        found = pattern.search(message)
        if found:
            listed = found.groupdict().get("all") or ""
            return AttentionLine(
                line=number,
                process=process,
                backend=found.group("name"),
                kind=kind,
                said=message,
                candidates=_names(listed),
            )
    found = _FORCED.search(message)
    if found:
        return AttentionLine(
            line=number, process=process, backend=found.group("name"), kind=kind, said=message
        )
    if _NOT_ATTENTION.search(message):
        return None
    found = _SPOKEN_LINE.search(message)
    if found is None or found.group("name").strip().lower() not in SPOKEN:
        return None
    return AttentionLine(
        line=number,
        process=process,
        backend=_name(found.group("name")),
        kind=kind,
        said=message,
        engine="V1" if found.group("v1") else None,
    )
