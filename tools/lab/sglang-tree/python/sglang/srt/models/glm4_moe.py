"""GLM-4 MoE: grouped-query attention and a routed MoE."""

from __future__ import annotations

from sglang.srt.distributed import tensor_model_parallel_all_reduce
from sglang.srt.model_executor.forward_batch_info import ForwardBatch


class Glm4MoeForCausalLM:
    def __init__(self, config, attn_backend, tp_size: int) -> None:
        self.config = config
        self.attn_backend = attn_backend
        self.tp_size = tp_size

    def forward(self, batch: ForwardBatch) -> float:
        moe = 0.03 + min(batch.num_tokens * 8, 160) * 0.004 * 8 / self.tp_size
        layer = self.attn_backend.forward(batch) + moe
        layer += 2 * tensor_model_parallel_all_reduce(batch.num_tokens, self.config.hidden_size)
        return layer * self.config.num_layers + 0.1


EntryClass = Glm4MoeForCausalLM
