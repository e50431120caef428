"""Culprits whose size is a parameter: milliseconds added to each verify cycle.

Two places of the lab's cost model take a per-layer cost: the eager kernel launches of
model_runner.py and triton's extend kernel (which verify runs). A verify cycle runs both in the
target's 61 layers and in the draft head's one layer (its extend after the verify).
"""

from __future__ import annotations

from tools.lab.changes import Change
from tools.lab.library import ATTN, SRT
from tools.lab.seed import SEED_EXPECTED

LAYERS_PER_CYCLE = 61 + 1  # the target's layers and the draft head's, eager once per cycle
GOOD_VERIFY_MS = SEED_EXPECTED["good_verify_ms"]  # the good state's verify cycle, noise-free
EAGER_MS_PER_LAYER = 0.02
TRITON_EXTEND_MS = 0.016

# the library slots the knobs edit: a scenario with a knob draws no other change there
KNOB_SLOTS = ("eager", "triton")


def _per_layer(extra_ms_per_cycle: float) -> float:
    return extra_ms_per_cycle / LAYERS_PER_CYCLE


def eager_launch(extra_ms: float, kind: str) -> Change:
    value = EAGER_MS_PER_LAYER + _per_layer(extra_ms)
    return Change(
        file=f"{SRT}/model_executor/model_runner.py",
        old=f"EAGER_LAUNCH_MS_PER_LAYER = {EAGER_MS_PER_LAYER}  # kernel launches when the "
        "forward runs eagerly\n",
        new=f"EAGER_LAUNCH_MS_PER_LAYER = {value:.4f}  # kernel launches when the forward "
        "runs eagerly\n",
        role="culprit",
        kind=kind,
        why=f"every eager forward (verify among them) launches more kernels: about "
        f"+{extra_ms:.1f} ms per verify cycle",
    )


def triton_extend(extra_ms: float, kind: str) -> Change:
    value = TRITON_EXTEND_MS + _per_layer(extra_ms)
    return Change(
        file=f"{ATTN}/triton_backend.py",
        old=f"        return {TRITON_EXTEND_MS} + read_kv + batch.num_tokens * 3.0e-4\n",
        new="        # one KV split for extend: deterministic across batch sizes\n"
        f"        return {value:.4f} + read_kv + batch.num_tokens * 3.0e-4\n",
        role="culprit",
        kind=kind,
        why=f"triton extend (which verify runs) is slower per layer: about +{extra_ms:.1f} ms "
        "per verify cycle",
    )


def knob(slot: str, extra_ms: float, kind: str) -> Change:
    """The culprit of `slot` ("eager" or "triton") sized to add `extra_ms` per verify cycle."""
    return eager_launch(extra_ms, kind) if slot == "eager" else triton_extend(extra_ms, kind)
