"""Llama: dense decoder layers."""

from __future__ import annotations

from sglang.srt.distributed import tensor_model_parallel_all_reduce
from sglang.srt.model_executor.forward_batch_info import ForwardBatch


class LlamaForCausalLM:
    def __init__(self, config, attn_backend, tp_size: int) -> None:
        self.config = config
        self.attn_backend = attn_backend
        self.tp_size = tp_size

    def forward(self, batch: ForwardBatch) -> float:
        mlp = (0.05 + batch.num_tokens * 0.0004) * 8 / self.tp_size
        layer = self.attn_backend.forward(batch) + mlp
        layer += 2 * tensor_model_parallel_all_reduce(batch.num_tokens, self.config.hidden_size)
        return layer * self.config.num_layers + 0.08


EntryClass = LlamaForCausalLM
