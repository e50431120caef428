"""Tensor-parallel collectives: the all-reduce after each attention and MLP block."""

import os

import labgpu

BYTES_PER_ELEMENT = 2


def all_reduce_ms(num_tokens: int, hidden_size: int, tp_size: int) -> float:
    if tp_size == 1:
        return 0.0
    nbytes = num_tokens * hidden_size * BYTES_PER_ELEMENT
    bandwidth = 400e6 if labgpu.has_nvlink() else 50e6  # bytes per ms
    # NCCL's low-latency protocol starts small messages sooner (NCCL reads it in each rank)
    latency = 0.006 if os.environ.get("NCCL_PROTO") == "LL" else 0.008
    return latency + nbytes * (tp_size - 1) / tp_size / bandwidth
