"""FlashInfer attention for MLA models (DeepSeek-V3 / Kimi-K2 style latent KV)."""

from __future__ import annotations

from sglang.srt.layers.attention.base_attn_backend import AttentionBackend
from sglang.srt.model_executor.forward_batch_info import ForwardBatch

KV_LORA_RANK = 512
QK_ROPE_HEAD_DIM = 64


def _kv_bytes(num_entries: int, dtype_bytes: int) -> float:
    return num_entries * (KV_LORA_RANK + QK_ROPE_HEAD_DIM) * dtype_bytes


class FlashInferMLAAttnBackend(AttentionBackend):
    def __init__(self, runner) -> None:
        self.kv_cache_dtype_bytes = 1 if runner.kv_cache_dtype.startswith("fp8") else 2
        self.bytes_per_ms = 1.2e9

    def _load_kv(self, batch: ForwardBatch) -> float:
        entries = batch.batch_size * batch.seq_len
        # cast the whole KV pool slice to bf16, then gather the entries this batch reads
        cast = _kv_bytes(entries * 4, self.kv_cache_dtype_bytes)
        gather = _kv_bytes(entries, 2)
        return (cast + gather) / self.bytes_per_ms

    def forward_decode(self, batch: ForwardBatch) -> float:
        return 0.009 + self._load_kv(batch)

    def forward_extend(self, batch: ForwardBatch) -> float:
        return 0.013 + self._load_kv(batch) + batch.num_tokens * 2.5e-4
