"""FlashAttention (the lab's model of its cost on the simulated GPU)."""


class FlashAttentionBackend:
    name = "FLASH_ATTN"

    @staticmethod
    def num_splits(seq_len: int) -> int:
        # split the KV sequence so that a small decode batch still fills the GPU's SMs
        return max(1, min(16, seq_len // 256))

    @staticmethod
    def forward_ms(num_tokens: int, seq_len: int, decode: bool) -> float:
        """One layer's attention: prefill is compute-bound, decode reads the KV cache."""
        if not decode:
            return 0.002 + 0.0000002 * num_tokens * seq_len
        splits = FlashAttentionBackend.num_splits(seq_len)
        return 0.004 + 0.00004 * num_tokens * seq_len / splits
