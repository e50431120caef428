"""The EAGLE-3 draft head: one Llama layer on top of the target's hidden states."""

from __future__ import annotations

from sglang.srt.distributed import tensor_model_parallel_all_reduce
from sglang.srt.model_executor.forward_batch_info import ForwardBatch


class LlamaForCausalLMEagle3:
    def __init__(self, config, attn_backend, tp_size: int) -> None:
        self.config = config
        self.attn_backend = attn_backend
        self.tp_size = tp_size

    def forward(self, batch: ForwardBatch) -> float:
        fc = 0.05 + batch.num_tokens * 0.002  # fuse the target's three hidden-state taps
        mlp = 0.06 + batch.num_tokens * 0.001
        layer = self.attn_backend.forward(batch) + mlp
        layer += 2 * tensor_model_parallel_all_reduce(batch.num_tokens, self.config.hidden_size)
        lm_head = 0.25 + batch.batch_size * 0.01
        return fc + layer * self.config.num_layers + lm_head


EntryClass = LlamaForCausalLMEagle3
