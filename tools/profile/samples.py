"""One launch's profile: what the sampler in each of its Python processes counted.

Each process writes <pid>.profile.json beside its import-trace report: stacks in the collapsed
format (`file:qualname:first line` frames, root first) with the seconds each was seen for, and
the samples taken (the intervals' count, for the sampling error). Only the samples in
which a frame of the target's own tree was on the stack count: a thread of the runtime that
waits all along would otherwise dilute every share. Files of the tree are named by their path
in the repository; others by what follows `site-packages/`, or as they are.

Time spent waiting is left out, as py-spy leaves out idle threads: the sampler counts a thread
only when it used a CPU since its last look (the report's idle seconds are the rest), and here
a sample whose innermost frame is one of the standard library's waits (a lock, a queue, a
select loop, a socket) is left out too, for a platform where a thread's CPU clock cannot be
read. Waiting grows with the run's length, not with the work, and would otherwise rise with
every regression. A stack through a profiler's own code (a file or folder named for one:
torch.profiler writing its trace mid-bench) is left out with them: it is not the target's work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from pydantic import BaseModel

from tools.json_text import parse_json
from tools.profile.batch_means import share_errors

KEPT = 400  # functions kept per profile, the most sampled first
STACKS_KEPT = 300  # stacks kept for the flame graph, the most seen first
# a profiler's own work (torch.profiler exporting a trace, the lab's simulated one): a file or
# a folder named for one
_PROFILERS = re.compile(r"[^/;]*profiler[^/;:]*(/|\.py:)")
_STDLIB = re.compile(r"/lib/python3\.\d+/(?!(site|dist)-packages/)")
WAITS = frozenset(
    {"wait", "get", "select", "poll", "_poll", "accept", "recv", "recv_into", "_recv"}
    | {"_recv_bytes", "recv_bytes", "readinto", "readline", "join", "_wait_for_tstate_lock"}
    | {"serve_forever", "_run_once", "acquire", "sleep"}
)


class Profile(BaseModel):
    seconds: float  # thread time seen with the target's code on the stack
    samples: int  # the samples taken (every process's)
    interval_s: float
    processes: int  # processes that wrote a profile
    waiting_s: float = 0.0  # thread time left out as idle, waiting or profiling (above)
    # the outermost function of the tree on some stack (a thread's or a process's root: on
    # the way to everything its thread does, its inclusive time says nothing about where)
    roots: list[str] = []
    # "path:qualname" -> [inclusive seconds, self seconds]
    functions: dict[str, tuple[float, float]]
    # the most seen stacks, collapsed ("a;b;c": from the tree's outermost frame to the one
    # spending the time) -> seconds: what a flame graph draws
    stacks: dict[str, float] = {}
    # the batches of time the sampler counted in, and each kept function's standard errors of
    # its inclusive and self shares across them (tools/profile/batch_means.py; none: too few)
    batches: int = 0
    errors: dict[str, tuple[float, float]] = {}


def kept_stacks(stacks: dict[str, float]) -> dict[str, float]:
    """The STACKS_KEPT most seen of `stacks`."""
    return dict(sorted(stacks.items(), key=lambda s: -s[1])[:STACKS_KEPT])


def place(path: str, root: PurePath, resolve: bool) -> tuple[str, bool]:
    """A frame's file as the profile names it, and whether it is the tree's."""
    try:
        full = Path(path).resolve() if resolve else PurePath(path)
        return full.relative_to(root).as_posix(), True
    except (ValueError, OSError, RuntimeError):
        pass
    _, found, rest = path.partition("site-packages/")
    return (rest if found else path), False


def _waits(frame: str) -> bool:
    """Whether a frame is one of the standard library's waits."""
    path, _, rest = frame.rpartition(":")[0].rpartition(":")
    name = rest.rsplit(".", 1)[-1]
    return name in WAITS and _STDLIB.search(path) is not None


def _working(stacks: dict[str, float]) -> tuple[dict[str, float], float]:
    """The stacks that count, and the seconds of those left out as waits."""
    kept: dict[str, float] = {}
    waiting = 0.0
    for stack, seconds in stacks.items():
        if not isinstance(seconds, (int, float)) or not seconds > 0:
            continue
        if _waits(str(stack).rpartition(";")[2]) or _PROFILERS.search(str(stack)):
            waiting += seconds
        else:
            kept[str(stack)] = seconds
    return kept, waiting


def _batches(data: dict, width: float) -> list[tuple[int, dict]]:
    """A report's batches of stacks, each with its index in batches of `width` seconds (the
    widest any report used: all start when the bench begins); one batch where a report
    has none (an older sampler's `stacks`)."""
    if "batches" not in data:
        return [(0, dict(data["stacks"]))]
    own = float(data["batch_s"])
    return [(int(j * own / width + 1e-9), dict(b)) for j, b in enumerate(data["batches"])]


def _reports(trace_dir: Path) -> list[dict]:
    """The processes' reports that could be read (one cut short: the others still count)."""
    reports = []
    for report in sorted(trace_dir.glob("*.profile.json")):
        try:
            data = parse_json(report.read_text(errors="replace"))
            float(data["interval_s"]), int(data["samples"]), float(data.get("batch_s", 0.0))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        reports.append(data)
    return reports


@dataclass
class _Tally:
    """Seconds per function and batch of time, inclusive and self, as the stacks are read."""

    root: PurePath
    resolve: bool
    places: dict[str, tuple[str, bool]] = field(default_factory=dict)
    inclusive: dict[str, dict[int, float]] = field(default_factory=dict)
    own: dict[str, dict[int, float]] = field(default_factory=dict)
    totals: dict[int, float] = field(default_factory=dict)
    roots: set[str] = field(default_factory=set)
    collapsed: dict[str, float] = field(default_factory=dict)

    def add(self, stack: str, batch: int, seconds: float) -> None:
        frames = []
        for frame in stack.split(";"):
            path, name, _ = (["", "", ""] + frame.rsplit(":", 2))[-3:]
            if path not in self.places:
                self.places[path] = place(path, self.root, self.resolve)
            frames.append((self.places[path][1], f"{self.places[path][0]}:{name}"))
        first = next((i for i, (mine, _) in enumerate(frames) if mine), None)
        if first is None:
            return  # no frame of the tree: not the target's work
        self.totals[batch] = self.totals.get(batch, 0.0) + seconds
        self.roots.add(frames[first][1])
        way = ";".join(key for _, key in frames[first:])
        self.collapsed[way] = self.collapsed.get(way, 0.0) + seconds
        for key in {key for _, key in frames}:
            _add(self.inclusive, key, batch, seconds)
        _add(self.own, frames[-1][1], batch, seconds)


def read_profile(trace_dir: Path, tree: PurePath, resolve: bool = True) -> Profile | None:
    """The launch's profile from the reports in `trace_dir` (None: no process wrote one)."""
    reports = _reports(trace_dir)
    if not reports:
        return None
    width = max(float(data.get("batch_s", 0.0)) for data in reports) or 1.0
    tally = _Tally(Path(tree).resolve() if resolve else tree, resolve)
    waiting = 0.0
    for data in reports:
        waiting += float(data.get("idle_s", 0.0))
        try:
            batches = _batches(data, width)
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        for j, batch in batches:
            stacks, waited = _working(batch)
            waiting += waited
            for stack, seconds in stacks.items():
                tally.add(stack, j, seconds)
    inclusive, own, totals = tally.inclusive, tally.own, tally.totals
    kept = sorted(inclusive, key=lambda k: -sum(inclusive[k].values()))[:KEPT]
    inclusive_errors = share_errors({k: inclusive[k] for k in kept}, totals)
    own_errors = share_errors({k: own[k] for k in kept if k in own}, totals)
    return Profile(
        seconds=sum(totals.values()),
        samples=sum(int(data["samples"]) for data in reports),
        interval_s=float(reports[-1]["interval_s"]),
        processes=len(reports),
        functions={k: (sum(inclusive[k].values()), sum(own.get(k, {}).values())) for k in kept},
        waiting_s=waiting,
        roots=sorted(tally.roots & set(kept)),
        stacks=kept_stacks(tally.collapsed),
        batches=sum(1 for total in totals.values() if total > 0),
        errors={
            k: (inclusive_errors[k], own_errors.get(k, 0.0)) for k in kept if k in inclusive_errors
        },
    )


def _add(table: dict[str, dict[int, float]], key: str, batch: int, seconds: float) -> None:
    row = table.setdefault(key, {})
    row[batch] = row.get(batch, 0.0) + seconds
