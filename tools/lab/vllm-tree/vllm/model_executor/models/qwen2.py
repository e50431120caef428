"""Qwen2: Llama's blocks with biases in the attention projections."""

from vllm.model_executor.models.llama import LlamaForCausalLM


class Qwen2ForCausalLM(LlamaForCausalLM):
    mlp_ratio = 5.3
