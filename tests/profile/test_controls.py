"""Env vars and arguments tied to the movers of the family they control: NCCL's variables to
the communication kernels, an attention flag to the attention kernels, thread counts to the
CPU's time; a knob of no family that moved is left as it was."""

from __future__ import annotations

from agent.profile.controls import control_priors
from agent.profile.ties import Tie
from tools.profile.movers import Mover, Source
from tools.repo.candidates import Candidate


def _mover(function: str, share: float, source: Source = "gpu") -> Mover:
    return Mover(
        function=function,
        kind="self",
        source=source,
        bad=1.0 + share,
        good=1.0,
        delta=share,  # of a gap of 1
        low=share / 2,
        high=share * 1.5,
        share=share,
        change="grew" if share > 0 else "shrank",
    )


def _env(name: str) -> Candidate:
    return Candidate(id=f"env-{name}", kind="env", name=name, good=None, bad="1")


def test_knobs_are_tied_to_the_movers_of_what_they_control() -> None:
    moved = [
        _mover("[kernel] ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 0.8),
        _mover("[kernel] _fwd_grouped_kernel_stage1_attention", 0.3),
        _mover("python/pkg/sampler.py:Sampler.sample", 0.1, "sampled"),
        _mover("[kernel] fused_moe_kernel", -0.2),  # shrank: speaks for nothing
    ]
    patch = (
        "diff --git a/python/pkg/engine.py b/python/pkg/engine.py\n"
        "--- a/python/pkg/engine.py\n+++ b/python/pkg/engine.py\n"
        "@@ -1,1 +1,2 @@\n import os\n+os.environ['NCCL_ALGO'] = 'Ring'\n"
    )
    hunk = Candidate(
        id="engine-1",
        kind="hunk",
        file="python/pkg/engine.py",
        header="@@ -1,1 +1,2 @@",
        added=1,
        patch=patch,
    )
    candidates = [
        _env("NCCL_PROTO"),
        Candidate(id="arg-attn", kind="arg", name="--attention-backend", good="fa3", bad="triton"),
        _env("OMP_NUM_THREADS"),
        _env("SGLANG_MOE_RUNNER"),
        _env("HF_HOME"),
        hunk,
    ]
    ties = control_priors(candidates, moved, "ms")
    assert ties["env-NCCL_PROTO"].factor == 1 + 4 * 0.8 * 0.5
    assert "NCCL_PROTO controls communication (NCCL)" in ties["env-NCCL_PROTO"].reason
    assert "ncclDevKernel_AllReduce" in ties["env-NCCL_PROTO"].reason
    nccl = ties["env-NCCL_PROTO"]
    assert ties["engine-1"] == Tie(
        nccl.factor, nccl.reason.replace("NCCL_PROTO", "NCCL_ALGO"), nccl.weight
    )
    assert "attention_backend controls attention" in ties["arg-attn"].reason
    assert ties["arg-attn"].factor == 1 + 4 * 0.3 * 0.5
    assert "OMP_NUM_THREADS controls CPU threads" in ties["env-OMP_NUM_THREADS"].reason
    assert "env-SGLANG_MOE_RUNNER" not in ties  # its kernels shrank
    assert "env-HF_HOME" not in ties
    assert control_priors(candidates, [], "ms") == {}
