"""A profile from torch profiler traces (SGLang's `/start_profile` writes one per rank): the
GPU time of each kernel, and of each Python function of the tree on the stack that launched
it.

A trace in torch's Chrome format (`*.trace.json`, gzipped or not) ties a kernel to the CPU
call that launched it by `args.correlation`, and, recorded with stacks, that call sits inside
nested `python_function` events named `path(line): function`. A kernel's time counts as self
time of its own name (`[kernel] name`) and of the innermost function of the tree around its
launch (the call site), and as inclusive time of every function of the tree on the way. A
function is named `path:Class.name` as the sampler names it, read from the file where it can
be (tools/profile/code_names.py), else `path:name@line` as the trace names it.
"""

from __future__ import annotations

import gzip
import math
import re
import sys
import zlib
from collections import defaultdict
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from tools.json_stream import array_items
from tools.profile.code_names import SourceNames
from tools.profile.samples import KEPT, Profile, kept_stacks, place

KERNEL_CATS = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
LAUNCH_CATS = frozenset({"cuda_runtime", "cuda_driver"})
_FRAME = re.compile(r"^(?P<path>.+)\((?P<line>\d+)\): (?P<name>.+)$")
Span = tuple[float, float, str]  # start, end, "path:function" ("" for a frame not of the tree)


def trace_files(folder: Path) -> list[Path]:
    return sorted([*folder.glob("*.trace.json.gz"), *folder.glob("*.trace.json")])


@dataclass
class _Trace:
    """What one trace says, kept compact (a trace has millions of events)."""

    frames: dict[tuple, list[Span]] = field(default_factory=lambda: defaultdict(list))
    launches: dict[tuple, list[tuple[float, Hashable]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    kernels: list[tuple[float, str, Hashable]] = field(default_factory=list)  # s, name, corr.


def _correlation(args: object) -> Hashable:
    value = args.get("correlation") if isinstance(args, dict) else None
    return value if isinstance(value, (int, float, str)) else None  # a list ties nothing


def _read(path: Path, root: PurePath, resolve: bool, names: SourceNames) -> _Trace:
    """The trace at `path`, streamed; a ValueError or OSError where it cannot be read whole."""
    trace = _Trace()
    places: dict[str, tuple[str, bool]] = {}
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", errors="replace") as f:
        for e in array_items(f, "traceEvents"):
            if not isinstance(e, dict):
                continue
            cat, ts, dur = e.get("cat"), e.get("ts"), e.get("dur")
            if cat in KERNEL_CATS:
                if isinstance(dur, (int, float)) and 0 < dur < math.inf:
                    name = sys.intern(f"[kernel] {e.get('name', '?')}")  # one str a name
                    trace.kernels.append((dur / 1e6, name, _correlation(e.get("args"))))
                continue
            if not isinstance(ts, (int, float)):
                continue
            thread = (_key(e.get("pid")), _key(e.get("tid")))
            if cat == "python_function" and (m := _FRAME.match(str(e.get("name", "")))):
                if m["path"] not in places:
                    places[m["path"]] = place(m["path"], root, resolve)
                where, in_tree = places[m["path"]]
                key = ""
                if in_tree:
                    key = sys.intern(
                        f"{where}:{names.qualname(m['path'], m['name'], int(m['line']))}"
                    )
                end = ts + (dur if isinstance(dur, (int, float)) else 0)
                trace.frames[thread].append((ts, end, key))
            elif cat in LAUNCH_CATS:
                trace.launches[thread].append((ts, _correlation(e.get("args"))))
    return trace


def _key(value: object) -> Hashable:
    return value if isinstance(value, (int, float, str)) else repr(value)


def _stacks(trace: _Trace) -> dict[Hashable, list[str]]:
    """correlation -> the tree's functions around the launch, outermost first."""
    found: dict[Hashable, list[str]] = {}
    for thread, calls in trace.launches.items():
        spans = sorted(trace.frames.get(thread, []), key=lambda s: (s[0], -s[1]))
        open_spans: list[Span] = []  # the frames around the time swept to: they nest
        i = 0
        for ts, correlation in sorted(calls, key=lambda c: c[0]):
            while i < len(spans) and spans[i][0] <= ts:
                while open_spans and open_spans[-1][1] < spans[i][0]:
                    open_spans.pop()
                open_spans.append(spans[i])
                i += 1
            while open_spans and open_spans[-1][1] < ts:
                open_spans.pop()
            if correlation is not None:
                found[correlation] = [n for start, end, n in open_spans if n and end >= ts]
    return found


def read_torch_traces(folder: Path, tree: PurePath, resolve: bool = True) -> Profile | None:
    """The GPU profile of the traces in `folder` (None: no trace, or none could be read)."""
    root = Path(tree).resolve() if resolve else tree
    inclusive: dict[str, float] = defaultdict(float)
    own: dict[str, float] = defaultdict(float)
    roots: set[str] = set()
    collapsed: dict[str, float] = defaultdict(float)
    seconds, kernels, read = 0.0, 0, 0
    names = SourceNames()  # the tree's files, each parsed once for all the ranks' traces
    for path in trace_files(folder):
        try:
            trace = _read(path, root, resolve, names)
        except (OSError, ValueError, EOFError, zlib.error):
            continue  # a trace cut short or garbled: the others still count
        read += 1
        stacks = _stacks(trace)
        for spent, name, correlation in trace.kernels:
            seconds += spent
            kernels += 1
            own[name] += spent
            inclusive[name] += spent
            stack = stacks.get(correlation) if correlation is not None else None
            collapsed[";".join([*(stack or []), name])] += spent
            if stack:
                own[stack[-1]] += spent
                roots.add(stack[0])
                for function in set(stack):
                    inclusive[function] += spent
    if not read or not kernels:
        return None
    kept = sorted(inclusive, key=lambda k: -inclusive[k])[:KEPT]
    return Profile(
        seconds=seconds,
        samples=kernels,
        interval_s=0.0,
        processes=read,
        functions={k: (inclusive[k], own.get(k, 0.0)) for k in kept},
        roots=sorted(roots & set(kept)),
        stacks=kept_stacks(collapsed),
    )
