"""SGLang's custom all-reduce: one kernel over peer-to-peer memory, for small messages."""

from __future__ import annotations

import logging

import labgpu

logger = logging.getLogger(__name__)

MAX_SIZE = 8 * 1024 * 1024


class CustomAllreduce:
    def __init__(self, world_size: int) -> None:
        self.world_size = world_size

    def should_custom_ar(self, nbytes: int) -> bool:
        return nbytes <= MAX_SIZE and nbytes % 16 == 0

    def all_reduce(self, nbytes: int) -> float:
        return (4.0 + nbytes / 90.0e3) / 1000.0


def dispatch_custom_allreduce(world_size: int) -> CustomAllreduce | None:
    if world_size not in (2, 4, 6, 8):
        logger.warning("Custom allreduce is disabled due to an unsupported world size: %d.",
                       world_size)
        return None
    if world_size > 2 and not labgpu.has_nvlink():
        logger.warning(
            "Custom allreduce is disabled because it's not supported on more than two PCIe-only "
            "GPUs. To silence this warning, specify disable_custom_all_reduce=True explicitly."
        )
        return None
    return CustomAllreduce(world_size)
