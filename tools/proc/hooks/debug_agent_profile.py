"""debug-agent's sampling profiler, started in every Python process of a launch by the import
trace's sitecustomize when DEBUG_AGENT_PROFILE is 1 (a profiler that needs no attaching, no
privileges and nothing installed in the target's environment).

A daemon thread looks at every other thread's stack each DEBUG_AGENT_PROFILE_INTERVAL_MS
(default 10) and adds the time since its last look to the stack, root first, as
`file:function:first line` frames joined by ";" (the collapsed format of flame graphs), in the
batch of time it falls in: 8 to 16 contiguous batches, whatever the bench's length (a batch's
width doubles as they fill), so that the spread of a function's share between batches gives an
interval that knows consecutive samples are alike (the method of batch means). <trace
dir>/<pid>.profile.json holds the seconds per stack per batch, the samples taken and the
interval; it is
written when debug-agent asks for the import trace's reports (a flush token) and at exit, and
counted afresh when debug-agent says the bench begins (a restart token). A thread is counted
only while it works: one that used under a tenth of the time since the last look on a CPU (a
sleep, a lock, a socket, a blocking GPU sync; a watchdog that wakes for a moment, then waits
for the GIL) is idle, and its time goes to the report's idle seconds (py-spy leaves idle
threads out too: their time grows with the run's length, not with the work). Nothing here
releases the GIL between two looks (reading the kernel's wchan did, and made a 1 ms bench's
timings noisier). A C call that holds
the GIL (a regex, a copy) keeps the sampler waiting; the time it waited goes to the stack where
the interpreter next lets it run: the calling function when the call is in a loop, the caller's
next call otherwise."""

from __future__ import annotations  # the target's Python may be older than ours (3.8 and up)

import json
import os
import sys
import threading
import time

_ON = os.environ.get("DEBUG_AGENT_PROFILE") == "1"
_INTERVAL_S = float(os.environ.get("DEBUG_AGENT_PROFILE_INTERVAL_MS") or 10) / 1000
_MAX_DEPTH = 128
_batches: list[dict[str, float]] = []  # per batch of time: stack -> seconds
_MAX_BATCHES = 16
_width = [0.05]  # a batch's seconds: doubled (and pairs merged) when there would be more
_began = [0.0]  # when counting began (perf_counter)
_taken = [0]  # samples taken (a list: written by the sampler thread)
_idle = [0.0]  # seconds of threads seen idle
_closed = [False]  # the bench is over: what follows (the server stopping) is not counted
_cpu: dict[int, float] = {}  # thread ident -> its CPU seconds at the last look
BUSY = 0.1  # the share of the time since the last look a working thread spent on a CPU
_OWN = ("debug-agent-profile", "debug-agent-import-trace")
# held by a look, a restart and a dump's snapshot: the import trace's thread restarts and dumps
# while this one counts (made anew in a forked child, where the parent's may be held)
_lock = threading.Lock()


_labels: dict[object, str] = {}  # code object -> its frame label, made once


def _label(code) -> str:  # type: ignore[no-untyped-def]
    name = getattr(code, "co_qualname", code.co_name)  # 3.11 and up: Class.method
    label = _labels[code] = f"{code.co_filename}:{name}:{code.co_firstlineno}"
    return label


def _stack(frame) -> str:  # type: ignore[no-untyped-def]
    frames: list[str] = []
    while frame is not None and len(frames) < _MAX_DEPTH:
        code = frame.f_code
        frames.append(_labels.get(code) or _label(code))
        frame = frame.f_back
    return ";".join(reversed(frames))


def _used_cpu(ident: int, weight: float) -> bool:
    """Whether the thread used a CPU for at least BUSY of the last `weight` seconds (True
    where its CPU clock cannot be read)."""
    try:
        now = time.clock_gettime(time.pthread_getcpuclockid(ident))
    except (AttributeError, OSError, OverflowError, ValueError):
        return True
    before = _cpu.get(ident)
    _cpu[ident] = now
    return before is None or now - before >= BUSY * weight


def _own_threads() -> set[int]:
    return {t.ident for t in threading.enumerate() if t.name in _OWN and t.ident}


def _sample() -> None:
    skip = _own_threads()
    last = time.perf_counter()
    while True:
        time.sleep(_INTERVAL_S)
        # the time since the last look: a C call that holds the GIL (a regex, a copy) keeps
        # this thread waiting, and when it wakes the calling frame is the one on the stack
        now = time.perf_counter()
        weight, last = now - last, now
        if _taken[0] % 256 == 1:  # the import trace's thread may start after this one
            skip = _own_threads()
        with _lock:
            if not _closed[0]:
                _look(now, weight, skip)


def _look(now: float, weight: float, skip: set) -> None:  # type: ignore[type-arg]
    """Add `weight` seconds to the stack of every working thread (`_lock` held)."""
    counts = _batch(now)
    for ident, frame in sys._current_frames().items():
        if ident in skip:
            continue
        if not _used_cpu(ident, weight):
            _idle[0] += weight
            continue
        key = _stack(frame)
        counts[key] = counts.get(key, 0.0) + weight
    _taken[0] += 1


def _batch(now: float) -> dict[str, float]:
    """The counts of the batch `now` falls in (pairs merged while there would be too many)."""
    index = max(int((now - _began[0]) / _width[0]), 0)
    while index >= _MAX_BATCHES:
        merged = []
        for first in range(0, len(_batches), 2):
            pair = dict(_batches[first])
            for key, seconds in (_batches[first + 1] if first + 1 < len(_batches) else {}).items():
                pair[key] = pair.get(key, 0.0) + seconds
            merged.append(pair)
        _batches[:] = merged
        _width[0] *= 2
        index = max(int((now - _began[0]) / _width[0]), 0)
    while len(_batches) <= index:
        _batches.append({})
    return _batches[index]


def dump(directory: str, close: bool = False) -> None:
    """Write this process's profile so far (beside the import trace's report); `close`: the
    bench is over, count no more (a later dump, at exit, then writes nothing)."""
    with _lock:
        if not _ON or _closed[0]:
            return
        _closed[0] = close
        data = {
            "interval_s": _INTERVAL_S,
            "samples": _taken[0],
            "idle_s": _idle[0],
            "batch_s": _width[0],
            "batches": [dict(batch) for batch in _batches],
        }
    path = os.path.join(directory, f"{os.getpid()}.profile.json")
    try:
        with open(path + ".tmp", "w") as out:
            json.dump(data, out)
        os.replace(path + ".tmp", path)
    except OSError:
        pass


def restart() -> None:
    """Count from now on only (the bench begins: start-up is not what it measures)."""
    with _lock:
        del _batches[:]
        _width[0], _began[0] = 0.05, time.perf_counter()
        _taken[0], _idle[0], _closed[0] = 0, 0.0, False


def start() -> None:
    """Start sampling this process (again in a forked child: it has only the forking thread)."""
    global _lock
    if not _ON:
        return
    _lock = threading.Lock()  # a forked child's copy may be held by the parent's sampler
    restart()
    _cpu.clear()  # a forked child's threads are new
    threading.Thread(target=_sample, daemon=True, name="debug-agent-profile").start()
