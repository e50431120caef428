"""EAGLE speculative decoding: draft a chain of tokens, verify them in one target forward."""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass

from sglang.srt.model_executor.forward_batch_info import ForwardBatch, ForwardMode
from sglang.srt.model_executor.model_runner import ModelRunner

logger = logging.getLogger(__name__)


@dataclass
class VerifyOutput:
    accepted: list[int]  # tokens each request gains this cycle (accepted drafts + bonus token)
    correct_drafts: int
    can_run_cuda_graph: bool


def draft_attention_backend(server_args) -> str:
    # the draft head is a plain Llama layer: MLA-only kernels cannot run it
    if server_args.attention_backend in ("trtllm_mla", "flashmla"):
        return "triton"
    return server_args.attention_backend


class EAGLEWorker:
    def __init__(self, server_args, target: ModelRunner, rng: random.Random) -> None:
        self.target = target
        self.draft = ModelRunner(server_args, server_args.speculative_draft_model_path,
                                 server_args.tp_size, target.clock,
                                 attention_backend=draft_attention_backend(server_args))
        self.num_steps = server_args.speculative_num_steps
        self.num_draft_tokens = server_args.speculative_num_draft_tokens
        self.acceptance = self.draft.model_config.draft_acceptance
        self.rng = rng

    def forward_batch_generation(self, bs: int, seq_len: int) -> VerifyOutput:
        for _ in range(self.num_steps):
            self.draft.forward(ForwardBatch(ForwardMode.DECODE, bs, bs, seq_len))
        verify = ForwardBatch(ForwardMode.TARGET_VERIFY, bs, bs * self.num_draft_tokens, seq_len)
        _, graph = self.target.forward(verify)
        accepted = [1 + self._accepted_drafts() for _ in range(bs)]
        self.draft.forward(ForwardBatch(ForwardMode.DRAFT_EXTEND, bs, sum(accepted), seq_len))
        return VerifyOutput(accepted, sum(accepted) - bs, graph)

    def _accepted_drafts(self) -> int:
        """Drafts accepted in a chain (topk=1): stop at the first rejected one."""
        n = 0
        while n < self.num_draft_tokens - 1 and self.rng.random() < self.acceptance:
            n += 1
        return n
