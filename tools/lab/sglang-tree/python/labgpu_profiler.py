"""The simulated GPU's torch profiler (SGLang's `/start_profile`, `/stop_profile`): while it
runs, every cost function of the lab's tree that returns a time computed from no other cost (a
leaf: an attention kernel, an all-reduce, an MoE) is a kernel launched from its Python stack.
The trace is written in torch's Chrome format, as `{profile_id}-TP-{rank}.trace.json.gz`."""

from __future__ import annotations

import gzip
import json
import os
import sys


class Profiler:
    """The kernels of each forward share its spent time in proportion to their costs (a
    layer's kernels stand for all its layers)."""

    def __init__(self, output_dir: str, profile_id: str, rank: int, steps: int) -> None:
        self.steps_left = steps or -1  # forwards to record (-1: until stopped)
        self.path = os.path.join(output_dir, f"{profile_id}-TP-{rank}.trace.json.gz")
        self.root = os.path.dirname(os.path.abspath(__file__))
        # the simulated GPU and its profiler launch nothing of their own
        self.own = {os.path.join(self.root, "labgpu.py"), sys._getframe().f_code.co_filename}
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
        return filename.startswith(self.root) and filename not in self.own

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
        (a cost with no kernel, as the scheduler's own, is one kernel of its caller); after the
        steps asked for, the trace is written (SGLang's num_steps)."""
        kernels = self.pending or [("scheduler_overhead", spent_ms, self._stack(caller))]
        self.pending = []
        total = sum(cost for _, cost, _ in kernels)
        ts = start_ms * 1000.0
        for name, cost, stack in kernels:
            dur = spent_ms * 1000.0 * cost / total
            self._kernel(name, ts, dur, stack)
            ts += dur
        self.steps_left -= 1
        if self.steps_left == 0:
            stop_profile()

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
        data = json.dumps({"traceEvents": self.events}, separators=(",", ":")).encode()
        with open(self.path, "wb") as out:
            out.write(gzip.compress(data, compresslevel=1))


RUNNING: Profiler | None = None


def _qualname(code) -> str:
    return getattr(code, "co_qualname", code.co_name)  # Python 3.11 and up: Class.method


def start_profile(output_dir: str, profile_id: str, rank: int, steps: int = 0) -> None:
    global RUNNING
    RUNNING = Profiler(output_dir, profile_id, rank, steps)
    sys.setprofile(RUNNING.hook)


def stop_profile() -> str | None:
    """Stop the profiler and write its trace; the trace's path (None: none was running)."""
    global RUNNING
    profiler, RUNNING = RUNNING, None
    sys.setprofile(None)
    if profiler is None:
        return None
    profiler.write()
    return profiler.path
