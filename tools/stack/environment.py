"""A package set built as a virtual environment of its own, once: cached by its content.

uv builds it (`uv venv`, then `uv pip install --no-deps` of exactly the set: a freeze is
complete, so nothing is resolved anew and nothing else creeps in), with uv's shared download
cache, and offline from a wheel folder where the node has no index. `uv pip check` then says
whether the set holds together: a package whose requirements the set breaks (a release that
pins another's exact version, the other moved alone) makes the set unresolved, an answer
(`Unresolved`) and never a verdict on speed. The folder is named by a digest of the set, the
interpreter and the sources; a marker written last tells a built one from one cut short.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from pydantic import BaseModel

from tools.errors import BuildError

BUILT = ".debug-agent-built"
UNRESOLVED = ".debug-agent-unresolved"  # kept: a set that does not hold together never will


class Unresolved(BuildError):
    """The set cannot be installed or does not hold together: skipped, as a tree that does
    not build is."""


class Sources(BaseModel):
    wheels: str | None = None  # a folder of wheels (offline when there is no index)
    index_url: str | None = None
    offline: bool = False


class BuiltEnvironment(BaseModel):
    folder: str
    python: str  # what {python} stands for in a launch of this set
    cached: bool  # built by an earlier launch or investigation
    seconds: float


def requirement_lines(pins: dict[str, str]) -> list[str]:
    """`name==version`, or `name @ reference` where a set holds a URL in place of a version."""
    return [
        f"{name} @ {pin}" if "://" in pin or pin.startswith("git+") else f"{name}=={pin}"
        for name, pin in sorted(pins.items())
    ]


def build_environment(
    pins: dict[str, str], root: Path, base_python: str, sources: Sources, timeout_s: float = 1800
) -> BuiltEnvironment:
    """The environment holding exactly `pins` (name -> version or reference), under `root`."""
    started = time.monotonic()
    digest = hashlib.sha256(
        json.dumps(
            [requirement_lines(pins), _interpreter(base_python), sources.model_dump()]
        ).encode()
    ).hexdigest()
    folder = root / digest[:20]
    python = folder / "bin" / "python"
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{digest[:20]}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two launches of one set: one builds, one waits
        broken = folder / UNRESOLVED
        if broken.exists():  # `uv pip check` said so before: it says the same again
            raise Unresolved(broken.read_text().strip())
        cached = (folder / BUILT).exists()
        if not cached:
            shutil.rmtree(folder, ignore_errors=True)  # one cut short
            _build(pins, folder, base_python, sources, timeout_s)
            (folder / BUILT).write_text("\n".join(requirement_lines(pins)) + "\n")
    return BuiltEnvironment(
        folder=str(folder),
        python=str(python),
        cached=cached,
        seconds=round(time.monotonic() - started, 2),
    )


def _build(
    pins: dict[str, str], folder: Path, base_python: str, sources: Sources, timeout_s: float
) -> None:
    wanted = folder.with_suffix(".txt")
    wanted.write_text("\n".join(requirement_lines(pins)) + "\n")
    where: list[str] = []
    if sources.wheels:
        where += ["--find-links", sources.wheels]
    if sources.index_url:
        where += ["--index-url", sources.index_url]
    elif sources.wheels and sources.offline:
        where += ["--no-index"]
    if sources.offline:
        where += ["--offline"]
    python = str(folder / "bin" / "python")
    _uv(
        ["venv", "--quiet", "--python", base_python, str(folder)], timeout_s, "make the environment"
    )
    _uv(
        ["pip", "install", "--quiet", "--python", python, "--no-deps", "-r", str(wanted), *where],
        timeout_s,
        "install the set",
    )
    try:
        _uv(["pip", "check", "--python", python], timeout_s, "check the set")
    except Unresolved as e:
        (folder / UNRESOLVED).write_text(f"{e}\n")
        raise


def _uv(args: list[str], timeout_s: float, what: str) -> None:
    from uv import find_uv_bin

    env = {**os.environ, "UV_NO_PROGRESS": "1", "VIRTUAL_ENV": ""}
    try:
        done = subprocess.run(
            [find_uv_bin(), *args], capture_output=True, text=True, timeout=timeout_s, env=env
        )
    except subprocess.TimeoutExpired:
        raise Unresolved(f"uv could not {what} in {timeout_s:.0f} s") from None
    except OSError as e:  # no uv binary, or none that runs here
        raise Unresolved(f"uv could not {what}: {e.strerror or e}") from None
    if done.returncode:
        lines = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        why = "; ".join(lines[-3:]) or f"exit status {done.returncode}"
        raise Unresolved(f"uv could not {what}: {why}")


def _interpreter(python: str) -> str:
    """The base interpreter's version and platform: a set built for one is not another's."""
    try:
        done = subprocess.run(
            [python, "-c", "import sys, sysconfig; print(sys.version, sysconfig.get_platform())"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except OSError as e:
        raise Unresolved(f"cannot run the base Python {python}: {e.strerror or e}") from None
    if done.returncode:
        raise Unresolved(f"cannot run the base Python {python}: exit status {done.returncode}")
    return done.stdout.strip()
