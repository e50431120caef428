"""The simulated GPU node of the debug-agent lab (stands in for the CUDA driver and the hardware).

Kernels "run" by adding model milliseconds to a per-process clock; the process also sleeps a
scaled-down fraction of that time, so a server is really busy while it works. Logs and HTTP
replies report model time. While SGLang's `/start_profile` runs, labgpu_profiler records every
kernel with its Python call stack and writes a trace in torch's Chrome format. Every knob
is an environment variable so that a launch command can change the machine:

    SGLANG_LAB_GPU         sm90 | sm100 | sm120 (default sm120, RTX PRO 6000 Blackwell)
    SGLANG_LAB_LINK        pcie | nvlink (default pcie)
    SGLANG_LAB_TIME_SCALE  wall seconds per model second (default 0.005)
    SGLANG_LAB_STEP_CV     coefficient of variation of each forward's time (default 0.02)
    SGLANG_LAB_LAUNCH_CV   coefficient of variation between launches (default 0.01)
    SGLANG_LAB_SEED        seed of the noise, with DEBUG_AGENT_LAUNCH (the launch debug-agent
                           names); unset means a fresh seed per launch
"""

from __future__ import annotations

import os
import random
import sys
import time

import labgpu_profiler
from labgpu_profiler import start_profile, stop_profile  # noqa: F401  (the scheduler's)

_MEMORY_GB = {"sm90": 80.0, "sm100": 180.0, "sm120": 96.0}
_NAMES = {"sm90": "NVIDIA H100 80GB HBM3", "sm100": "NVIDIA B200",
          "sm120": "NVIDIA RTX PRO 6000 Blackwell Server Edition"}


class LabConfigError(ValueError):
    pass


def _env_float(name: str, default: float, low: float, high: float) -> float:
    raw = os.environ.get(name, "")
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise LabConfigError(f"{name}={raw!r} is not a number") from None
    if not low <= value <= high:
        raise LabConfigError(f"{name}={raw!r} is outside [{low}, {high}]")
    return value


def gpu_arch() -> str:
    arch = os.environ.get("SGLANG_LAB_GPU", "sm120")
    if arch not in _MEMORY_GB:
        raise LabConfigError(f"SGLANG_LAB_GPU={arch!r}: expected one of {sorted(_MEMORY_GB)}")
    return arch


def device_sm() -> int:
    return int(gpu_arch().removeprefix("sm"))


def cuda_version() -> tuple[int, int]:
    return (12, 9)


def device_name() -> str:
    """What torch.cuda.get_device_name() says on this GPU."""
    return _NAMES[gpu_arch()]


def memory_gb() -> float:
    return _MEMORY_GB[gpu_arch()]


def has_nvlink() -> bool:
    link = os.environ.get("SGLANG_LAB_LINK", "pcie")
    if link not in ("pcie", "nvlink"):
        raise LabConfigError(f"SGLANG_LAB_LINK={link!r}: expected 'pcie' or 'nvlink'")
    return link == "nvlink"


class Clock:
    """Model time of one process, with seeded noise per forward and per launch."""

    def __init__(self) -> None:
        seed = os.environ.get("SGLANG_LAB_SEED")
        # with a seed, each launch debug-agent names draws its own noise, the same every time
        launch = os.environ.get("DEBUG_AGENT_LAUNCH", "")
        self.rng = random.Random(f"{int(seed)}:{launch}" if seed else None)
        self.time_scale = _env_float("SGLANG_LAB_TIME_SCALE", 0.005, 0.0, 10.0)
        self.step_cv = _env_float("SGLANG_LAB_STEP_CV", 0.02, 0.0, 1.0)
        launch_cv = _env_float("SGLANG_LAB_LAUNCH_CV", 0.01, 0.0, 1.0)
        self.launch_factor = max(0.5, self.rng.gauss(1.0, launch_cv))
        self.now_ms = 0.0
        self._owed_wall_s = 0.0

    def run(self, cost_ms: float) -> float:
        """Spend `cost_ms` of model time (plus noise); return what was really spent."""
        spent = cost_ms * self.launch_factor * max(0.2, self.rng.gauss(1.0, self.step_cv))
        profiler = labgpu_profiler.RUNNING
        if profiler is not None:
            profiler.lay_out(self.now_ms, spent, sys._getframe(1))
        self.now_ms += spent
        self._owed_wall_s += spent * self.time_scale / 1000.0
        if self._owed_wall_s >= 0.002:
            time.sleep(self._owed_wall_s)
            self._owed_wall_s = 0.0
        return spent

