"""The seed scenario: the story the README tells, as uncommitted changes to the lab's SGLang.

EAGLE-3 verify went from ~19 ms to ~29 ms per cycle on 8 PCIe-only Blackwell GPUs serving
Kimi-K2.5. The working tree holds what the engineer had touched: a FlashInfer MLA change (the
server runs triton), a GLM-4 MoE branch for sm120 (the model is DeepSeek-V3 style), three ways of
pushing NCCL_PROTO=LL / NCCL_ALGO=Ring to the workers (they arrive and change nothing that
matters), and the real culprit: an all-reduce that goes token by token for small multi-token
batches, which is exactly the verify step and never the one-token decode.
"""

from __future__ import annotations

from tools.lab.changes import Change

ATTN = "python/sglang/srt/layers/attention"

FLASHINFER_MLA_GATHER_THEN_CAST = Change(
    file=f"{ATTN}/flashinfer_mla_backend.py",
    old="""\
        # cast the whole KV pool slice to bf16, then gather the entries this batch reads
        cast = _kv_bytes(entries * 4, self.kv_cache_dtype_bytes)
        gather = _kv_bytes(entries, 2)
        return (cast + gather) / self.bytes_per_ms
""",
    new="""\
        # gather the entries this batch reads first, then cast only those to bf16
        gather = _kv_bytes(entries, self.kv_cache_dtype_bytes)
        cast = _kv_bytes(entries, 2)
        return (gather + cast) / self.bytes_per_ms
""",
    role="decoy",
    kind="unexecuted-backend",
    why="flashinfer_mla_backend.py is never imported: the server resolves "
    "attention_backend='triton' for an MLA model on sm120 (and the change is a speed-up)",
)

GLM4_MOE_SM120 = Change(
    file="python/sglang/srt/server_args.py",
    old="""\
        elif arch == "Glm4MoeForCausalLM":
            if is_sm100_supported():
""",
    new="""\
        elif arch == "Glm4MoeForCausalLM":
            if is_sm100_supported() or is_sm120_supported():
""",
    role="decoy",
    kind="other-architecture-branch",
    why="the branch is for Glm4MoeForCausalLM; Kimi-K2.5 is DeepseekV3ForCausalLM",
)

ENGINE_NCCL_ENV = Change(
    file="python/sglang/srt/entrypoints/engine.py",
    old="""\
    os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "8"
""",
    new="""\
    os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "8"
    # NCCL tuning for PCIe-only nodes, exported before the schedulers are spawned
    os.environ.setdefault("NCCL_PROTO", "LL")
    os.environ.setdefault("NCCL_ALGO", "Ring")
""",
    role="decoy",
    kind="env-propagated-no-effect",
    why="NCCL_PROTO=LL / NCCL_ALGO=Ring reach the schedulers (sitecustomize.py sets them too) "
    "and do not move verify time",
)

SCHEDULER_NCCL_ENV = Change(
    file="python/sglang/srt/managers/scheduler.py",
    old="""\
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
""",
    new="""\
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    # the schedulers must see the NCCL tuning even when the launcher's env is lost
    os.environ.setdefault("NCCL_PROTO", "LL")
    os.environ.setdefault("NCCL_ALGO", "Ring")
""",
    role="decoy",
    kind="env-propagated-no-effect",
    why="the same NCCL variables again, set in each scheduler; they arrive and change nothing",
)

SITECUSTOMIZE_NCCL_ENV = Change(
    file="python/sitecustomize.py",
    old="",
    new="""\
# Site-wide NCCL tuning for this PCIe-only node: every Python process gets it at start-up,
# the scheduler processes that multiprocessing spawns included.
import os

os.environ["NCCL_PROTO"] = "LL"
os.environ["NCCL_ALGO"] = "Ring"
""",
    role="decoy",
    kind="env-propagated-no-effect",
    why="sitecustomize.py on PYTHONPATH sets the NCCL variables in every process; they arrive "
    "and change nothing",
)

ALLREDUCE_PER_TOKEN = Change(
    file="python/sglang/srt/distributed/parallel_state.py",
    old="""\
        nbytes = num_tokens * hidden_size * BYTES_PER_ELEMENT
        if self.ca_comm is not None""",
    new="""\
        if 1 < num_tokens <= 8:
            # keep every message inside NCCL's low-latency window on PCIe:
            # reduce small multi-token batches one token at a time
            return sum(self.all_reduce(1, hidden_size) for _ in range(num_tokens))
        nbytes = num_tokens * hidden_size * BYTES_PER_ELEMENT
        if self.ca_comm is not None""",
    role="culprit",
    kind="allreduce-split",
    why="verify (3 tokens per request) now pays three all-reduce latencies per call instead of "
    "one, 122 calls per forward: +10 ms per cycle; the one-token decode is untouched",
)

SEED_CHANGES = [
    FLASHINFER_MLA_GATHER_THEN_CAST,
    GLM4_MOE_SM120,
    ENGINE_NCCL_ENV,
    SCHEDULER_NCCL_ENV,
    SITECUSTOMIZE_NCCL_ENV,
    ALLREDUCE_PER_TOKEN,
]

SEED_EXPECTED = {
    "good_verify_ms": 19.0,
    "bad_verify_ms": 29.0,
    "no_spec_tok_s": 82.0,
    "bad_spec_tok_s": 60.0,
}
