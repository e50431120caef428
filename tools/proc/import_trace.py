"""Which modules the server's processes really imported: the best on-path evidence there is.

`traced_env` adds a sitecustomize hook (tools/proc/hooks/) in front of the launch's PYTHONPATH; the
target's own sitecustomize still runs after it. `read_trace` maps the loaded files back to the
repository's paths.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Collection
from contextlib import suppress
from functools import cached_property
from pathlib import Path, PurePath

from pydantic import BaseModel

from tools.proc.open_trace import OpenTrace
from tools.profile.samples import Profile, read_profile
from tools.profile.torch_trace import read_torch_traces

HOOK_DIR = Path(__file__).parent / "hooks"


class ImportTrace(BaseModel):
    processes: int  # processes that reported
    files: list[str]  # repo-relative paths of loaded source files, sorted
    pids: list[int] = []  # the processes that reported
    # watched repository files loaded, but not from the scratch tree: path -> where from
    from_checkout: dict[str, str] = {}  # the user's own repository (an editable install)
    elsewhere: dict[str, str] = {}  # another copy of the package (an install, a vendored one)
    opens: OpenTrace = OpenTrace()  # which changed data files the launch opened
    # where the launch ran in an environment of a [stack]: the distributions any process loaded
    # a module or a shared library of (canonical names); None: not known
    distributions: list[str] | None = None
    profile: Profile | None = None  # where its processes spent their time (tools/profile)
    kernels: Profile | None = None  # the GPU time of its torch traces, where it wrote some
    kernels_refused: str | None = None  # why the server's torch profiler did not start

    def imported(self, path: str) -> bool:
        return path in self.loaded

    # a trace is read whole, then only read: what these cache does not change under them

    @cached_property
    def loaded(self) -> frozenset[str]:
        """`files`, for lookups (a set built per lookup made 20,000 of them quadratic)."""
        return frozenset(self.files)

    @cached_property
    def open_controls(self) -> list[str]:
        """The watched source files the launch imported, where each shows as opened: proof
        that the open watch saw the launch (none: it did not, and an unopened file proves
        nothing). Once per trace: per candidate it was 20,000 x 20,000 lookups."""
        controls = [f for f in self.opens.watched if f.endswith(".py") and self.imported(f)]
        return controls if set(controls) <= self.opens.opened_set else []


TRACE_DIR_VAR = "DEBUG_AGENT_IMPORT_TRACE_DIR"
PROFILE_VAR = "DEBUG_AGENT_PROFILE"  # "1": the sampling profiler runs beside the trace
PROFILE_INTERVAL_VAR = "DEBUG_AGENT_PROFILE_INTERVAL_MS"
TORCH = "torch"  # the folder SGLang's torch profiler writes its traces to
BUILD = "build"  # the build step's reports: what it imported counts, its processes do not


def traced_env(
    env: dict[str, str],
    trace_dir: PurePath,
    cwd: PurePath,
    hook_dir: PurePath = HOOK_DIR,
    inherited: str | None = None,
) -> dict[str, str]:
    """`env` plus the hook; relative PYTHONPATH entries are made absolute against `cwd`.

    `inherited` is the PYTHONPATH the server would otherwise get (default: this process's).
    """
    original = env.get(
        "PYTHONPATH", os.environ.get("PYTHONPATH", "") if inherited is None else inherited
    )
    parts = [
        p if posixpath.isabs(p) else posixpath.normpath(posixpath.join(str(cwd), p))
        for p in original.split(os.pathsep)
        if p
    ]
    return {
        **env,
        "PYTHONPATH": os.pathsep.join([str(hook_dir), *parts]),
        TRACE_DIR_VAR: str(trace_dir),
        PROFILE_VAR: env.get(PROFILE_VAR) or os.environ.get(PROFILE_VAR) or "1",
    }


def build_env(env: dict[str, str]) -> dict[str, str]:
    """A traced env for the build step: its reports go to a folder of their own, so that its
    processes are not taken for the server's (one that left no report hides nothing)."""
    if TRACE_DIR_VAR not in env:
        return env
    return {**env, TRACE_DIR_VAR: posixpath.join(env[TRACE_DIR_VAR], BUILD)}


def read_trace(
    trace_dir: Path,
    tree: PurePath,
    resolve: bool = True,
    watch: Collection[str] = (),
    user_repo: PurePath | None = None,
    copies: bool = True,
) -> ImportTrace:
    """`resolve=False` for a remote tree: its paths mean nothing on this machine. `watch`:
    repository paths (the changed files) whose loading from elsewhere than the tree is
    reported: from `user_repo` (the user's own checkout) or, with `copies` (not when a build
    step may have installed the tree's own code), another copy of the package. A script a
    command line names is where the user pointed: never reported."""
    root = Path(tree).resolve() if resolve else Path(tree)
    files: set[str] = set()
    outside: list[PurePath] = []
    scripts: list[str] = []
    reports = sorted(trace_dir.glob("*.txt"))
    for report in [*reports, *sorted((trace_dir / BUILD).glob("*.txt"))]:
        argv, *loaded = report.read_text(errors="replace").splitlines() or [""]
        scripts += [word.lstrip("./") for word in argv.split() if word.endswith(".py")]
        for line in loaded:
            path = _path(line, resolve)
            if path is None:
                continue
            try:
                files.add(path.relative_to(root).as_posix().replace("/__pycache__/", "/"))
            except ValueError:
                outside.append(path)
    pids = sorted(int(r.stem) for r in reports if r.stem.isdigit())
    named = [p for p in outside if not any(p.as_posix().endswith("/" + s) for s in scripts)]
    checkout, elsewhere = _loaded_elsewhere(
        set(watch) - files, named, user_repo, root if resolve and copies else None
    )
    return ImportTrace(
        processes=len(reports),
        files=sorted(files),
        pids=pids,
        from_checkout=checkout,
        elsewhere=elsewhere,
        profile=read_profile(trace_dir, root, resolve),
        kernels=read_torch_traces(trace_dir / TORCH, root, resolve),
    )


def _path(line: str, resolve: bool) -> PurePath | None:
    try:
        return Path(line).resolve() if resolve else Path(line)
    except (OSError, ValueError, RuntimeError):  # a NUL byte, a link loop
        return None


def _loaded_elsewhere(
    watched: set[str], outside: list[PurePath], user_repo: PurePath | None, tree: Path | None
) -> tuple[dict[str, str], dict[str, str]]:
    """Each watched .py file the tree did not provide but another copy did: the same path in
    the user's repository (`from_checkout`), or, for a file of a package in the tree (on this
    machine), the same dotted path from the top of a package (`mylib/core.py` in
    `site-packages/mylib/`, not in `otherpkg/mylib/`) in another copy (`elsewhere`)."""
    if not watched or not outside:  # every changed file came from the tree: nothing to match
        return {}, {}
    by_tail: dict[tuple[str, ...], str] = {}
    for rel in watched:
        if rel.endswith(".py") and tree is not None:
            parts = PurePath(rel).parts
            depth = _package_depth(tree, parts)
            if depth >= 1:
                by_tail[parts[-depth - 1 :]] = rel
    checkout: dict[str, str] = {}
    found: dict[str, str] = {}
    for path in outside:
        text = path.as_posix().replace("/__pycache__/", "/")
        if user_repo is not None:
            with suppress(ValueError):
                rel = PurePath(text).relative_to(user_repo).as_posix()
                if rel in watched:
                    checkout[rel] = text
                    continue
        parts = PurePath(text).parts
        for k in range(2, len(parts)):
            twin = by_tail.get(parts[-k:])
            if twin is not None and not Path(*parts[:-k], "__init__.py").exists():
                found.setdefault(twin, text)
                break
    return dict(sorted(checkout.items())), dict(sorted(found.items()))


def _package_depth(tree: Path, parts: tuple[str, ...]) -> int:
    """How many folders above the file are packages (hold an __init__.py), from its own up."""
    depth = 0
    while depth < len(parts) - 1 and (tree.joinpath(*parts[: -depth - 1]) / "__init__.py").exists():
        depth += 1
    return depth


FLUSH = "flush"  # a token written here asks every traced process to write its report now
RESTART = "restart-profile"  # ... to count its profile from now on (the bench begins)
ANSWERS = {FLUSH: "flushed", RESTART: "restarted"}  # each process's answer: <pid>.<answer>


def wait_for_trace(
    trace_dir: Path, pids: list[int], timeout_s: float = 3.0, ask: str = FLUSH
) -> None:
    """Ask every traced process to write its report now (or, `ask` RESTART, to count its
    profile afresh), and wait until each of `pids` still running has (a module the
    benchmark's last request imported is then in the report). A process that never reported
    (no hook: started with -S, say) is not waited for."""
    import time
    import uuid

    import psutil

    token = uuid.uuid4().hex
    (trace_dir / ask).write_text(token)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        waiting = [
            pid
            for pid in pids
            if (trace_dir / f"{pid}.txt").exists()
            and not _answered(trace_dir / f"{pid}.{ANSWERS[ask]}", token)
        ]
        if not [pid for pid in waiting if psutil.pid_exists(pid)]:
            return
        time.sleep(0.05)


def _answered(answer: Path, token: str) -> bool:
    try:
        return answer.read_text() == token
    except OSError:
        return False
