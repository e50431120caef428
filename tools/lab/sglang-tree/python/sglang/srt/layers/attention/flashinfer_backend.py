"""FlashInfer attention for models without MLA."""

from __future__ import annotations

from sglang.srt.layers.attention.base_attn_backend import AttentionBackend
from sglang.srt.model_executor.forward_batch_info import ForwardBatch


class FlashInferAttnBackend(AttentionBackend):
    def __init__(self, runner) -> None:
        self.workspace_mb = 512

    def forward_decode(self, batch: ForwardBatch) -> float:
        return 0.008 + batch.batch_size * batch.seq_len * 1.5e-6

    def forward_extend(self, batch: ForwardBatch) -> float:
        return 0.012 + batch.batch_size * batch.seq_len * 1.5e-6 + batch.num_tokens * 2.5e-4
