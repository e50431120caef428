"""FlashInfer (the lab's model of its cost on the simulated GPU)."""


class FlashInferBackend:
    name = "FLASHINFER"

    @staticmethod
    def forward_ms(num_tokens: int, seq_len: int, decode: bool) -> float:
        if not decode:
            return 0.003 + 0.0000002 * num_tokens * seq_len
        # plan once per step, then a decode kernel over the paged KV cache, cast as it is read
        return 0.006 + 0.00001 * num_tokens * seq_len
