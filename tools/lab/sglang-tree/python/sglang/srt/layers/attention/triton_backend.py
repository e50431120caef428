"""Triton attention: the portable backend (the default on sm120)."""

from __future__ import annotations

from sglang.srt.layers.attention.base_attn_backend import AttentionBackend
from sglang.srt.model_executor.forward_batch_info import ForwardBatch


class TritonAttnBackend(AttentionBackend):
    def __init__(self, runner) -> None:
        self.num_kv_splits = 8
        self.heads_per_rank = max(1, 128 // runner.tp_size)

    def forward_decode(self, batch: ForwardBatch) -> float:
        # split-KV decode kernel, then the reduction over the splits
        read_kv = batch.batch_size * batch.seq_len * 2.0e-6
        return 0.011 + read_kv + 0.002 * (self.num_kv_splits > 1)

    def forward_extend(self, batch: ForwardBatch) -> float:
        read_kv = batch.batch_size * batch.seq_len * 2.0e-6
        return 0.016 + read_kv + batch.num_tokens * 3.0e-4
