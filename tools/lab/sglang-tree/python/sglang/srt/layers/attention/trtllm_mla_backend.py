"""TensorRT-LLM MLA kernels: Blackwell datacenter parts (sm100) only."""

from __future__ import annotations

from sglang.srt.layers.attention.base_attn_backend import AttentionBackend
from sglang.srt.model_executor.forward_batch_info import ForwardBatch
from sglang.srt.utils import is_sm100_supported


class TRTLLMMLABackend(AttentionBackend):
    def __init__(self, runner) -> None:
        if not is_sm100_supported():
            raise RuntimeError("TRTLLM MLA backend is only supported on Blackwell GPUs (SM100).")
        self.page_size = 64

    def forward_decode(self, batch: ForwardBatch) -> float:
        return 0.006 + batch.batch_size * batch.seq_len * 0.9e-6

    def forward_extend(self, batch: ForwardBatch) -> float:
        return 0.009 + batch.batch_size * batch.seq_len * 0.9e-6 + batch.num_tokens * 1.6e-4
