"""Llama: attention and MLP blocks, each followed by a tensor-parallel all-reduce."""

from vllm.distributed.parallel_state import all_reduce_ms


class LlamaForCausalLM:
    mlp_ratio = 3.5

    def __init__(self, num_layers: int, hidden_size: int, tp_size: int, attention) -> None:
        self.num_layers, self.hidden_size, self.tp_size = num_layers, hidden_size, tp_size
        self.attention = attention

    def forward_ms(self, num_tokens: int, seq_len: int, decode: bool) -> float:
        """One forward over `num_tokens` tokens whose sequences are `seq_len` long."""
        scale = self.hidden_size / 4096 / self.tp_size
        weights = 0.12 * scale * (1 + self.mlp_ratio) / 4.5  # reading a layer's weights
        compute = 0.00005 * num_tokens * scale
        attention = self.attention.forward_ms(num_tokens, seq_len, decode)
        comm = 2 * all_reduce_ms(num_tokens, self.hidden_size, self.tp_size)
        return self.num_layers * (weights + compute + attention + comm)
