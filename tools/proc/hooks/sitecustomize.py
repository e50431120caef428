"""debug-agent's import trace, loaded into every Python process of a launched server.

Put first on PYTHONPATH with DEBUG_AGENT_IMPORT_TRACE_DIR set: each process writes the files of
the modules it has loaded to <dir>/<pid>.txt (every half second while that set grows, and at
exit). Then the target's own sitecustomize (the next one on sys.path), if any, is run as if this
file did not exist.
"""

import atexit
import importlib.machinery
import importlib.util
import os
import sys
import threading

_DIR = os.environ.get("DEBUG_AGENT_IMPORT_TRACE_DIR")


def _dump(directory: str) -> None:
    files = sorted({getattr(m, "__file__", None) or "" for m in list(sys.modules.values())} - {""})
    path = os.path.join(directory, f"{os.getpid()}.txt")
    try:
        with open(path + ".tmp", "w") as out:
            out.write(" ".join(sys.orig_argv) + "\n" + "\n".join(files) + "\n")
        os.replace(path + ".tmp", path)
    except OSError:
        pass


def _loop(directory: str) -> None:
    event = threading.Event()
    delay, dumped = 0.05, -1  # soon after start-up, then every half second
    while not event.wait(delay):
        if len(sys.modules) != dumped:  # a server at work imports nothing: costs it nothing
            dumped = len(sys.modules)
            _dump(directory)
        delay = min(0.5, delay * 2)


def _chain_target_sitecustomize() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


if _DIR:
    atexit.register(_dump, _DIR)
    threading.Thread(
        target=_loop, args=(_DIR,), daemon=True, name="debug-agent-import-trace"
    ).start()
_chain_target_sitecustomize()
