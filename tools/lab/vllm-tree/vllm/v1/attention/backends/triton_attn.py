"""Triton attention (the lab's model of its cost on the simulated GPU)."""


class TritonAttentionBackend:
    name = "TRITON_ATTN_VLLM_V1"

    @staticmethod
    def forward_ms(num_tokens: int, seq_len: int, decode: bool) -> float:
        if not decode:
            return 0.004 + 0.0000003 * num_tokens * seq_len
        return 0.008 + 0.000012 * num_tokens * seq_len
