"""Attention in plain PyTorch ops: runs anywhere, slowly; a reference and a last resort."""

from __future__ import annotations

from sglang.srt.layers.attention.base_attn_backend import AttentionBackend
from sglang.srt.model_executor.forward_batch_info import ForwardBatch


class TorchNativeAttnBackend(AttentionBackend):
    def __init__(self, runner) -> None:
        self.use_mla = runner.use_mla_backend

    def forward_decode(self, batch: ForwardBatch) -> float:
        return 0.085 + batch.batch_size * batch.seq_len * 6.0e-6

    def forward_extend(self, batch: ForwardBatch) -> float:
        return 0.115 + batch.batch_size * batch.seq_len * 6.0e-6 + batch.num_tokens * 1.2e-3
