"""FlashAttention 3: Hopper (sm90) only."""

from __future__ import annotations

from sglang.srt.layers.attention.base_attn_backend import AttentionBackend
from sglang.srt.model_executor.forward_batch_info import ForwardBatch
from sglang.srt.utils import is_sm90_supported


class FlashAttentionBackend(AttentionBackend):
    def __init__(self, runner) -> None:
        if not is_sm90_supported():
            raise RuntimeError("FlashAttention v3 Backend requires SM>=90 and SM<=90.")

    def forward_decode(self, batch: ForwardBatch) -> float:
        return 0.007 + batch.batch_size * batch.seq_len * 1.2e-6

    def forward_extend(self, batch: ForwardBatch) -> float:
        return 0.010 + batch.batch_size * batch.seq_len * 1.2e-6 + batch.num_tokens * 2.0e-4
