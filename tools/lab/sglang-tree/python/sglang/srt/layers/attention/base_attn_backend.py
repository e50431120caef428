"""The interface every attention backend implements; costs are model milliseconds per layer."""

from __future__ import annotations

from sglang.srt.model_executor.forward_batch_info import ForwardBatch


class AttentionBackend:
    def forward(self, batch: ForwardBatch) -> float:
        if batch.mode.is_decode():
            return self.forward_decode(batch)
        return self.forward_extend(batch)

    def forward_decode(self, batch: ForwardBatch) -> float:
        raise NotImplementedError

    def forward_extend(self, batch: ForwardBatch) -> float:
        raise NotImplementedError
