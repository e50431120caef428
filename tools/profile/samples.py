"""One launch's profile: what the sampler in each of its Python processes counted.

Each process writes <pid>.profile.json beside its import-trace report: stacks in the collapsed
format (`file:qualname:first line` frames, root first) with the seconds each was seen for, and
the samples taken (the intervals' count, for the sampling error). Only the samples in
which a frame of the target's own tree was on the stack count: a thread of the runtime that
waits all along would otherwise dilute every share. Files of the tree are named by their path
in the repository; others by what follows `site-packages/`, or as they are.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePath

from pydantic import BaseModel

KEPT = 400  # functions kept per profile, the most sampled first


class Profile(BaseModel):
    seconds: float  # thread time seen with the target's code on the stack
    samples: int  # the samples taken (every process's)
    interval_s: float
    processes: int  # processes that wrote a profile
    # "path:qualname" -> [inclusive seconds, self seconds]
    functions: dict[str, tuple[float, float]]


def _place(path: str, root: PurePath, resolve: bool) -> tuple[str, bool]:
    """A frame's file as the profile names it, and whether it is the tree's."""
    try:
        full = Path(path).resolve() if resolve else PurePath(path)
        return full.relative_to(root).as_posix(), True
    except (ValueError, OSError, RuntimeError):
        pass
    _, found, rest = path.partition("site-packages/")
    return (rest if found else path), False


def read_profile(trace_dir: Path, tree: PurePath, resolve: bool = True) -> Profile | None:
    """The launch's profile from the reports in `trace_dir` (None: no process wrote one)."""
    root = Path(tree).resolve() if resolve else tree
    reports = sorted(trace_dir.glob("*.profile.json"))
    places: dict[str, tuple[str, bool]] = {}
    inclusive: dict[str, float] = {}
    own: dict[str, float] = {}
    seconds, samples, interval, processes = 0.0, 0, 0.0, 0
    for report in reports:
        try:
            data = json.loads(report.read_text(errors="replace"))
            stacks = dict(data["stacks"])
            interval = float(data["interval_s"])
            taken = int(data["samples"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a report cut short: the others still count
        processes += 1
        samples += taken
        for stack, count in stacks.items():
            if not isinstance(count, (int, float)) or not count > 0:
                continue
            frames = []
            for frame in str(stack).split(";"):
                path, name, _ = (["", "", ""] + frame.rsplit(":", 2))[-3:]
                if path not in places:
                    places[path] = _place(path, root, resolve)
                frames.append((places[path], name))
            if not any(in_tree for (_, in_tree), _ in frames):
                continue
            seconds += count
            for key in {f"{where}:{name}" for (where, _), name in frames}:
                inclusive[key] = inclusive.get(key, 0) + count
            (where, _), name = frames[-1]
            own[f"{where}:{name}"] = own.get(f"{where}:{name}", 0) + count
    if not processes:
        return None
    kept = sorted(inclusive, key=lambda k: -inclusive[k])[:KEPT]
    functions = {k: (inclusive[k], own.get(k, 0.0)) for k in kept}
    return Profile(
        seconds=seconds,
        samples=samples,
        interval_s=interval,
        processes=processes,
        functions=functions,
    )
