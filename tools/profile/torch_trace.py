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
import re
from collections import defaultdict
from pathlib import Path, PurePath

from tools.json_text import parse_json
from tools.profile.code_names import SourceNames
from tools.profile.samples import KEPT, Profile, kept_stacks, place

KERNEL_CATS = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
LAUNCH_CATS = frozenset({"cuda_runtime", "cuda_driver"})
_FRAME = re.compile(r"^(?P<path>.+)\((?P<line>\d+)\): (?P<name>.+)$")
Span = tuple[float, float, str]  # start, end, "path:function" ("" for a frame not of the tree)


def trace_files(folder: Path) -> list[Path]:
    return sorted([*folder.glob("*.trace.json.gz"), *folder.glob("*.trace.json")])


def _events(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", errors="replace") as f:
        data = parse_json(f.read())
    events = data.get("traceEvents", []) if isinstance(data, dict) else data
    return [e for e in events if isinstance(e, dict)] if isinstance(events, list) else []


def _stacks(
    events: list[dict], root: PurePath, resolve: bool, names: SourceNames
) -> dict[object, list[str]]:
    """correlation -> the tree's functions around the launch, outermost first."""
    frames: dict[tuple, list[Span]] = defaultdict(list)
    launches: dict[tuple, list[tuple[float, object]]] = defaultdict(list)
    places: dict[str, tuple[str, bool]] = {}
    for e in events:
        thread, ts = (e.get("pid"), e.get("tid")), e.get("ts")
        if not isinstance(ts, (int, float)):
            continue
        if e.get("cat") == "python_function" and (m := _FRAME.match(str(e.get("name", "")))):
            if m["path"] not in places:
                places[m["path"]] = place(m["path"], root, resolve)
            where, in_tree = places[m["path"]]
            end = ts + float(e.get("dur") or 0)
            key = ""
            if in_tree:
                qualname = names.qualname(m["path"], m["name"], int(m["line"]))
                key = f"{where}:{qualname}"
            frames[thread].append((ts, end, key))
        elif e.get("cat") in LAUNCH_CATS and isinstance(args := e.get("args"), dict):
            launches[thread].append((ts, args.get("correlation")))
    found: dict[object, list[str]] = {}
    for thread, calls in launches.items():
        spans = sorted(frames.get(thread, []), key=lambda s: (s[0], -s[1]))
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
            events = _events(path)
        except (OSError, ValueError, EOFError):
            continue  # a trace cut short: the others still count
        read += 1
        stacks = _stacks(events, root, resolve, names)
        for e in events:
            args, dur = e.get("args"), e.get("dur")
            if e.get("cat") not in KERNEL_CATS or not isinstance(dur, (int, float)) or dur <= 0:
                continue
            spent = dur / 1e6
            seconds += spent
            kernels += 1
            name = f"[kernel] {e.get('name', '?')}"
            own[name] += spent
            inclusive[name] += spent
            stack = stacks.get(args.get("correlation")) if isinstance(args, dict) else None
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
