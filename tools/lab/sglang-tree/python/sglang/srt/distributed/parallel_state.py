"""The tensor-parallel group and its all-reduce (after attention and after the MLP of a layer)."""

from __future__ import annotations

from sglang.srt.distributed.device_communicators.custom_all_reduce import (
    CustomAllreduce,
    dispatch_custom_allreduce,
)
from sglang.srt.distributed.device_communicators.pynccl import PyNcclCommunicator

BYTES_PER_ELEMENT = 2  # bf16 activations


class GroupCoordinator:
    def __init__(self, world_size: int, rank: int, use_custom_allreduce: bool) -> None:
        self.world_size = world_size
        self.rank = rank
        self.pynccl_comm = PyNcclCommunicator(world_size)
        self.ca_comm: CustomAllreduce | None = None
        if use_custom_allreduce and world_size > 1:
            self.ca_comm = dispatch_custom_allreduce(world_size)

    def all_reduce(self, num_tokens: int, hidden_size: int) -> float:
        """Milliseconds to all-reduce the hidden states of `num_tokens` tokens."""
        if self.world_size == 1:
            return 0.0
        nbytes = num_tokens * hidden_size * BYTES_PER_ELEMENT
        if self.ca_comm is not None and self.ca_comm.should_custom_ar(nbytes):
            return self.ca_comm.all_reduce(nbytes)
        return self.pynccl_comm.all_reduce(nbytes)


_TP: GroupCoordinator | None = None


def initialize_model_parallel(tp_size: int, rank: int, use_custom_allreduce: bool) -> None:
    global _TP
    _TP = GroupCoordinator(tp_size, rank, use_custom_allreduce)


def get_tp_group() -> GroupCoordinator:
    if _TP is None:
        raise RuntimeError("tensor model parallel group is not initialized")
    return _TP


def tensor_model_parallel_all_reduce(num_tokens: int, hidden_size: int) -> float:
    return get_tp_group().all_reduce(num_tokens, hidden_size)
