"""debug-agent's import trace, loaded into every Python process of a launched server.

Put first on PYTHONPATH with DEBUG_AGENT_IMPORT_TRACE_DIR set: each process writes the files of
the modules it has loaded to <dir>/<pid>.txt, and the variables it set, changed or removed in its
own os.environ since it started to <dir>/<pid>.env.json ({name: value, or null when removed}:
/proc/PID/environ only ever shows the environment a process started with). Both are written
within a fifth of a second of a change, and at exit; and when debug-agent writes a new token to
<dir>/flush (before it stops the server), each process writes both and then the token to
<dir>/<pid>.flushed, so that a module imported by the benchmark's last request is not missed.
Names that look like credentials are left out of the env file (they would be written unmasked;
tools/secrets.py cannot be imported here, in the target's interpreter). Then the target's own
sitecustomize (the next one on sys.path), if any, is run as if this file did not exist.
"""

from __future__ import annotations  # the target's Python may be older than ours (3.8 and up)

import atexit
import contextlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import threading

_DIR = os.environ.get("DEBUG_AGENT_IMPORT_TRACE_DIR")
_STARTED_WITH = dict(os.environ)  # the environment this process started with
_CREDENTIAL_WORDS = ("key", "token", "secret", "passw", "credential", "auth")
try:
    _START_CWD = os.getcwd()
except OSError:  # started in a folder since deleted: relative paths cannot be placed
    _START_CWD = ""
_LOADED: set[str] = set()


def _write(path: str, text: str) -> None:
    try:
        with open(path + ".tmp", "w") as out:
            out.write(text)
        os.replace(path + ".tmp", path)
    except OSError:
        pass


def _env_changes() -> dict[str, str | None]:
    now = dict(os.environ)
    changed: dict[str, str | None] = {k: v for k, v in now.items() if _STARTED_WITH.get(k) != v}
    changed.update({k: None for k in _STARTED_WITH if k not in now})
    return {k: v for k, v in changed.items() if not any(w in k.lower() for w in _CREDENTIAL_WORDS)}


def _main_script() -> str | None:
    """The script `python x.py` runs: CPython takes `__file__` off `__main__` once the script
    has returned, before atexit, so argv answers then."""
    path = getattr(sys.modules.get("__main__"), "__file__", None)
    if path:
        return path
    first = sys.argv[0] if getattr(sys, "argv", None) else ""
    script = _absolute(first) if first not in ("", "-c", "-m", "-") else ""
    return script if script and os.path.isfile(script) else None


def _absolute(path: str) -> str:
    """`path` against the folder the process started in (Python 3.8 keeps `python x.py`'s
    __file__ relative); not os.path.abspath, which fails once that folder is deleted."""
    if not path or os.path.isabs(path) or not _START_CWD:
        return path
    return os.path.normpath(os.path.join(_START_CWD, path))


def _shared_libraries() -> set[str]:
    """The shared libraries mapped into this process (a CUDA or NCCL library a package ships
    is loaded by the loader, not imported): /proc/self/maps, where there is one."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split(None, 5)[-1].strip() for line in maps if line.count(" ") >= 5}
    except OSError:
        return set()
    return {p for p in paths if p.startswith("/") and (p.endswith(".so") or ".so." in p)}


def _dump(directory: str) -> None:
    # every file loaded so far: a module gone from sys.modules was still imported
    _LOADED.update(getattr(m, "__file__", None) or "" for m in list(sys.modules.values()))
    _LOADED.update(_shared_libraries())
    _LOADED.add(_main_script() or "")
    files = sorted({_absolute(f) for f in _LOADED} - {""})
    base = os.path.join(directory, str(os.getpid()))
    _write(base + ".env.json", json.dumps(_env_changes(), sort_keys=True))
    argv = getattr(sys, "orig_argv", sys.argv)  # orig_argv: Python 3.10 and up
    _write(base + ".txt", " ".join(argv) + "\n" + "\n".join(files) + "\n")


def _dump_all(directory: str) -> None:
    """The trace's report, and the profile (written only when asked and at exit: it grows
    with every stack seen, and a server at start-up changes its modules many times)."""
    _dump(directory)
    if _profile is not None:
        _profile.dump(directory)


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _loop(directory: str) -> None:
    event = threading.Event()
    delay, dumped, flushed, restarted = 0.05, (-1, -1, 0), None, None  # then every 0.2 s
    while not event.wait(delay):
        seen = (len(sys.modules), len(os.environ), hash(frozenset(os.environ.items())))
        token = _read(os.path.join(directory, "flush"))
        if seen != dumped or token != flushed:  # a server at work imports nothing: no cost
            dumped = seen
            _dump(directory)
        if token is not None and token != flushed:
            if _profile is not None:  # the bench is over: count no more
                _profile.dump(directory, close=True)
            flushed = token
            _write(os.path.join(directory, f"{os.getpid()}.flushed"), token)
        ask = _read(os.path.join(directory, "restart-profile"))  # the bench begins
        if ask is not None and ask != restarted:
            if _profile is not None:
                _profile.restart()
            restarted = ask
            _write(os.path.join(directory, f"{os.getpid()}.restarted"), ask)
        delay = min(0.2, delay * 2)


def _chain_target_sitecustomize() -> None:
    here = os.path.dirname(_absolute(__file__))
    rest = [p for p in sys.path if _absolute(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


def _start(directory: str) -> None:
    threading.Thread(
        target=_loop, args=(directory,), daemon=True, name="debug-agent-import-trace"
    ).start()
    if _profile is not None:
        _profile.start()


_profile = None
if os.environ.get("DEBUG_AGENT_PROFILE") == "1":  # the sampling profiler, beside the trace
    with contextlib.suppress(ImportError):
        import debug_agent_profile as _profile  # type: ignore[no-redef]


if _DIR:
    _TRACE_DIR: str = _DIR
    with contextlib.suppress(OSError):  # a build step's reports: a folder of their own
        os.makedirs(_TRACE_DIR, exist_ok=True)
    atexit.register(_dump_all, _TRACE_DIR)
    _start(_TRACE_DIR)
    # a forked child has no threads but the one that forked: it reports under its own pid
    os.register_at_fork(after_in_child=lambda: _start(_TRACE_DIR))
_chain_target_sitecustomize()
