"""NCCL all-reduce. NCCL reads its tuning variables once, when the communicator is created."""

from __future__ import annotations

import os

import labgpu

# per-hop latency (microseconds) and bus bandwidth (bytes per microsecond) of each protocol
_PROTOCOLS = {
    "LL": {"pcie": (2.9, 6.0e3), "nvlink": (0.9, 60.0e3)},
    "LL128": {"pcie": (3.6, 10.0e3), "nvlink": (1.3, 140.0e3)},
    "Simple": {"pcie": (6.5, 12.0e3), "nvlink": (2.8, 180.0e3)},
}


class PyNcclCommunicator:
    def __init__(self, world_size: int) -> None:
        self.world_size = world_size
        self.link = "nvlink" if labgpu.has_nvlink() else "pcie"
        self.protocol = os.environ.get("NCCL_PROTO")  # None: NCCL picks per message size
        self.algorithm = os.environ.get("NCCL_ALGO", "Ring")
        if self.protocol is not None and self.protocol not in _PROTOCOLS:
            raise ValueError(f"NCCL_PROTO={self.protocol} is not a known protocol")

    def _pick_protocol(self, nbytes: int) -> str:
        if self.protocol is not None:
            return self.protocol
        return "LL" if nbytes <= 64 * 1024 else "Simple"

    def all_reduce(self, nbytes: int) -> float:
        """Milliseconds for one all-reduce of `nbytes` across the group."""
        hop_us, bytes_per_us = _PROTOCOLS[self._pick_protocol(nbytes)][self.link]
        n = self.world_size
        hops = 2 * (n - 1) if self.algorithm == "Ring" else 2 * max(1, (n - 1).bit_length())
        traffic = 2 * (n - 1) / n * nbytes
        return (hops * hop_us + traffic / bytes_per_us) / 1000.0
