"""What one forward pass works on."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ForwardMode(enum.Enum):
    EXTEND = "extend"  # prefill
    DECODE = "decode"  # one new token per request
    TARGET_VERIFY = "target_verify"  # the target checks the draft tokens of each request
    DRAFT_EXTEND = "draft_extend"  # the draft model catches up on the accepted tokens

    def is_decode(self) -> bool:
        return self is ForwardMode.DECODE


@dataclass(frozen=True)
class ForwardBatch:
    mode: ForwardMode
    batch_size: int
    num_tokens: int  # tokens computed in this pass, over all requests
    seq_len: int  # tokens each request attends to, on average
