"""The simulated GPU node of the debug-agent lab (stands in for the CUDA driver and the hardware).

Kernels "run" by adding model milliseconds to a per-process clock; the process also sleeps a
scaled-down fraction of that time, so a server is really busy while it works. Logs and HTTP
replies report model time. While SGLang's `/start_profile` runs, the profiler below records
every kernel with its Python call stack and writes a trace in torch's Chrome format. Every knob
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

import gzip
import json
import os
import random
import sys
import time

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
        if _PROFILER is not None:
            _PROFILER.lay_out(self.now_ms, spent, sys._getframe(1))
            _PROFILER.steps_left -= 1
            if _PROFILER.steps_left == 0:
                stop_profile()
        self.now_ms += spent
        self._owed_wall_s += spent * self.time_scale / 1000.0
        if self._owed_wall_s >= 0.002:
            time.sleep(self._owed_wall_s)
            self._owed_wall_s = 0.0
        return spent


class Profiler:
    """The simulated torch profiler: while it runs, every cost function of the tree that
    returns a time computed from no other cost (a leaf: an attention kernel, an all-reduce, an
    MoE) is a kernel launched from its Python stack. A forward's kernels share its spent time
    in proportion to their costs (a layer's kernels stand for all its layers)."""

    def __init__(self, output_dir: str, profile_id: str, rank: int, steps: int) -> None:
        self.steps_left = steps or -1  # forwards to record (-1: until stopped)
        self.path = os.path.join(output_dir, f"{profile_id}-TP-{rank}.trace.json.gz")
        self.root = os.path.dirname(os.path.abspath(__file__))
        self.own = sys._getframe().f_code.co_filename  # this simulated GPU launches nothing
        self.frames: list[list] = []  # [code, a cost returned inside it]
        self.pending: list[tuple[str, float, list[str]]] = []  # (kernel, cost, stack)
        self.events: list[dict] = []

    def hook(self, frame, event: str, arg) -> None:
        if event == "call":
            self.frames.append([frame.f_code, False])
        elif event == "return" and self.frames:
            code, had_cost = self.frames.pop()
            if isinstance(arg, float) and self._tree(code.co_filename):
                if not had_cost and arg > 0:
                    self.pending.append((_qualname(code), arg, self._stack(frame)))
                if self.frames:
                    self.frames[-1][1] = True

    def _tree(self, filename: str) -> bool:
        return filename.startswith(self.root) and filename != self.own

    def _stack(self, frame) -> list[str]:
        names = []
        while frame is not None:
            code = frame.f_code
            if self._tree(code.co_filename):
                names.append(f"{code.co_filename}({code.co_firstlineno}): {code.co_name}")
            frame = frame.f_back
        return names[::-1]

    def lay_out(self, start_ms: float, spent_ms: float, caller) -> None:
        """The pending kernels as events of the forward that spent `spent_ms` from `start_ms`
        (a cost with no kernel, as the scheduler's own, is one kernel of its caller)."""
        kernels = self.pending or [("scheduler_overhead", spent_ms, self._stack(caller))]
        self.pending = []
        total = sum(cost for _, cost, _ in kernels)
        ts = start_ms * 1000.0
        for name, cost, stack in kernels:
            dur = spent_ms * 1000.0 * cost / total
            self._kernel(name, ts, dur, stack)
            ts += dur

    def _kernel(self, name: str, ts: float, dur: float, stack: list[str]) -> None:
        correlation = len(self.events) + 1
        for depth, frame in enumerate(stack):  # outer frames enclose inner ones
            self.events.append({"ph": "X", "cat": "python_function", "name": frame, "pid": 1,
                                "tid": 1, "ts": ts + depth * 1e-3, "dur": dur - depth * 2e-3})
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                            "pid": 1, "tid": 1, "ts": ts + len(stack) * 1e-3, "dur": 1e-3,
                            "args": {"correlation": correlation}})
        self.events.append({"ph": "X", "cat": "kernel", "name": f"lab::{name}", "pid": 0,
                            "tid": 7, "ts": ts, "dur": dur,
                            "args": {"correlation": correlation, "stream": 7}})

    def write(self) -> None:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        with gzip.open(self.path, "wt") as out:
            json.dump({"traceEvents": self.events}, out)


_PROFILER: Profiler | None = None


def _qualname(code) -> str:
    return getattr(code, "co_qualname", code.co_name)  # Python 3.11 and up: Class.method


def start_profile(output_dir: str, profile_id: str, rank: int, steps: int = 0) -> None:
    global _PROFILER
    _PROFILER = Profiler(output_dir, profile_id, rank, steps)
    sys.setprofile(_PROFILER.hook)


def stop_profile() -> str | None:
    """Stop the profiler and write its trace; the trace's path (None: none was running)."""
    global _PROFILER
    profiler, _PROFILER = _PROFILER, None
    sys.setprofile(None)
    if profiler is None:
        return None
    profiler.write()
    return profiler.path
