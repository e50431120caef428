"""DeepSeek-V2/V3 (and Kimi-K2): MLA attention and a routed MoE, all-reduce after each."""

from __future__ import annotations

from sglang.srt.distributed import tensor_model_parallel_all_reduce
from sglang.srt.model_executor.forward_batch_info import ForwardBatch

NUM_EXPERTS_PER_TOKEN = 8


class DeepseekV2MoE:
    def __init__(self, tp_size: int) -> None:
        self.tp_size = tp_size

    def forward(self, batch: ForwardBatch) -> float:
        # tokens read the weights of their experts; neighbouring tokens share some experts
        expert_reads = min(NUM_EXPERTS_PER_TOKEN + (batch.num_tokens - 1) * 5, 384)
        return 0.039 + expert_reads * 0.0045 * 8 / self.tp_size


class DeepseekV2DecoderLayer:
    def __init__(self, config, attn_backend, tp_size: int) -> None:
        self.hidden_size = config.hidden_size
        self.attn_backend = attn_backend
        self.mlp = DeepseekV2MoE(tp_size)

    def forward(self, batch: ForwardBatch) -> float:
        ms = self.attn_backend.forward(batch)
        ms += tensor_model_parallel_all_reduce(batch.num_tokens, self.hidden_size)
        ms += self.mlp.forward(batch)
        ms += tensor_model_parallel_all_reduce(batch.num_tokens, self.hidden_size)
        return ms


class DeepseekV2ForCausalLM:
    def __init__(self, config, attn_backend, tp_size: int) -> None:
        self.config = config
        # the layers are identical in cost, so one stands for all of them
        self.layer = DeepseekV2DecoderLayer(config, attn_backend, tp_size)

    def forward(self, batch: ForwardBatch) -> float:
        lm_head = 0.3 + batch.batch_size * 0.01
        return self.layer.forward(batch) * self.config.num_layers + lm_head


class DeepseekV3ForCausalLM(DeepseekV2ForCausalLM):
    pass


EntryClass = [DeepseekV2ForCausalLM, DeepseekV3ForCausalLM]
