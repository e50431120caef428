"""Files that belong to another platform or another program than the server, told by evidence.

A file no import chain reaches is decided off when it belongs to a world of its own and no code
outside that world can import it on the server's GPU (world_reach.py: imports at any level,
since SGLang imports much of its platform code inside functions that run, resolved to the
module they name; strings and computed names too; a naming under a test the GPU fails, such as
`if _is_npu:` on CUDA, set aside with its place):

- **another platform's code**: its path names a platform (`hardware_backend/npu/`,
  `npu_communicator.py`, `hpu`, `xpu`, `musa`, `mlu`, `tpu`, `rocm`) other than the server's GPU;
- **another program**: the package's own tests (`sglang/test/`, any `test/` folder) and
  benchmark scripts (`bench_*.py`, `benchmarks/`).

A platform file that CUDA code imports anyway (parallel_state imports every platform's
communicator in a constructor that runs everywhere) is named outside its world and stays as the
import chains left it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from tools.code_paths.world_reach import world_reach
from tools.gpu.info import GpuInfo

_PLATFORMS = {
    "npu": ("npu", "Ascend NPUs"),
    "ascend": ("npu", "Ascend NPUs"),
    "hpu": ("hpu", "Intel Gaudi (HPU)"),
    "xpu": ("xpu", "Intel GPUs (XPU)"),
    "musa": ("musa", "Moore Threads GPUs (MUSA)"),
    "mlu": ("mlu", "Cambricon MLUs"),
    "tpu": ("tpu", "Google TPUs"),
    "rocm": ("hip", "AMD GPUs (ROCm)"),
}
PROGRAMS = "programs"  # the package's tests and benchmarks: one world, they import each other
_WORD = re.compile(r"[a-z0-9]+")


def platform_of(rel: str) -> tuple[str, str] | None:
    """The platform a path names in one of its words (`npu_communicator.py`, `npu/`)."""
    for word in _WORD.findall(rel.lower().removesuffix(".py")):
        if word in _PLATFORMS:
            return _PLATFORMS[word]
    return None


def _world(rel: str) -> tuple[str, str] | None:
    """The world a file belongs to besides the server: (key, words), or None."""
    parts = Path(rel).parts
    if any(p in ("test", "tests") for p in parts[:-1]):
        return PROGRAMS, "part of the package's tests, a program of its own"
    if parts[-1].startswith("bench_") or any(p in ("benchmark", "benchmarks") for p in parts):
        return PROGRAMS, "a benchmark script, a program of its own"
    named = platform_of(rel)
    return (named[0], f"code for {named[1]} (its path says so)") if named else None


@lru_cache(maxsize=4)
def _texts(pkg: Path) -> tuple[tuple[str, str, str | None], ...]:
    """Every Python file of the package: its path, its text, the key of its world."""
    found = []
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg).as_posix()
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        world = _world(rel)
        found.append((rel, text, world[0] if world else None))
    return tuple(found)


def package_texts(pkg: Path) -> dict[Path, str]:
    """Every Python file of the package, as text."""
    return {pkg / rel: text for rel, text, _ in _texts(pkg)}


def server_texts(pkg: Path) -> dict[str, str]:
    """The package's files outside its tests and bench scripts, as text."""
    return {rel: text for rel, text, world in _texts(pkg) if world != PROGRAMS}


def elsewhere(
    rel: str,
    pkg: Path,
    gpu: GpuInfo | None,
    runs: frozenset[str] | None = None,
    stops: frozenset[str] = frozenset(),
) -> list[str] | None:
    """Evidence that `rel` (package-relative) belongs to another platform or program, which
    nothing outside it names; None when that cannot be shown."""
    world = _world(rel)
    if world is None:
        return None
    key, words = world
    platform = key != PROGRAMS
    if platform and (gpu is None or gpu.vendor not in ("cuda", "hip") or gpu.vendor == key):
        return None  # the server's own platform's code is judged as any other
    dotted = f"{pkg.name}." + rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    if dotted.rsplit(".", 1)[-1] in ("__init__", pkg.name):
        return None
    texts = _texts(pkg)
    reach = world_reach(pkg, texts, key, gpu if platform else None, runs, stops)
    if dotted in reach.reached:
        return None
    where = "that platform's files" if platform else "them"
    evidence = [
        f"{rel} is {words}",
        f"no module of the package outside {where} can import {dotted} "
        f"({sum(at != key for _, _, at in texts)} files searched, function-level imports "
        "included, and what they import in turn)",
    ]
    if dead := reach.dead.get(dotted):
        shown = "; ".join(dead[:3]) + (f"; {len(dead) - 3} more" if len(dead) > 3 else "")
        evidence.append(f"it is named only under tests this GPU fails: {shown}")
    if platform and gpu is not None:
        evidence.append(f"the server runs on {gpu.describe()} ({gpu.source})")
    return evidence
