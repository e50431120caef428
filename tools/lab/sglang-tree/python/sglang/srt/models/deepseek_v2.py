"""DeepSeek-V2/V3 (and Kimi-K2): MLA attention and a routed MoE, all-reduce after each."""

from __future__ import annotations

import functools
import logging
import os

import labgpu

from sglang.srt.distributed import tensor_model_parallel_all_reduce
from sglang.srt.model_executor.forward_batch_info import ForwardBatch

logger = logging.getLogger(__name__)

NUM_EXPERTS = 384
NUM_EXPERTS_PER_TOKEN = 8
MOE_INTERMEDIATE_SIZE = 2048


@functools.lru_cache(maxsize=1)
def _warn_untuned_moe(tp_size: int) -> None:
    """SGLang's fused MoE looks for a kernel config tuned for this GPU; none ships for it."""
    name = (f"E={NUM_EXPERTS},N={MOE_INTERMEDIATE_SIZE // tp_size},device_name="
            f"{labgpu.device_name().replace(' ', '_')},dtype=fp8_w8a8,block_shape=[128, 128].json")
    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "layers", "moe",
                        "fused_moe_triton", "configs", "triton_3_4_0", name)
    logger.warning("Using default MoE kernel config. Performance might be sub-optimal! Config "
                   "file not found at %s, you can create them with https://github.com/"
                   "sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton", path)


class DeepseekV2MoE:
    def __init__(self, tp_size: int) -> None:
        self.tp_size = tp_size
        _warn_untuned_moe(tp_size)

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
