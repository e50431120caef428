"""The import trace sees what the server's processes loaded, without changing what they run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from agent.relevance import Facts, assess, env_arrival, untraced
from tools.config import load_config
from tools.proc.import_trace import read_trace, traced_env, wait_for_trace
from tools.proc.server import free_port, running_server
from tools.proc.worker_env import WorkerEnv, after_start, worker_env

WHO = "scheduler processes"  # what env_arrival counted


def test_trace_lists_loaded_modules_and_keeps_the_targets_sitecustomize(
    seed_lab: Path, tmp_path: Path
) -> None:
    config = load_config(seed_lab)
    trace_dir = tmp_path / "trace"
    trace_dir.mkdir()
    env = traced_env(config.launch.env, trace_dir, seed_lab)
    port = free_port()
    with running_server(config.launch_argv(port), seed_lab, env, port, tmp_path / "s.log") as s:
        time.sleep(0.6)  # one dump period
        workers = worker_env(s.pid)
    trace = read_trace(trace_dir, seed_lab)
    assert trace.processes >= 9
    attention = "python/sglang/srt/layers/attention/"
    assert trace.imported(attention + "triton_backend.py")
    assert trace.imported("python/sglang/srt/distributed/parallel_state.py")
    assert not trace.imported(attention + "flashinfer_mla_backend.py")
    assert trace.imported("python/sitecustomize.py")  # the lab's own, chained by the hook
    schedulers = [p for p in workers.processes if p.role == "scheduler"]
    assert {p.env.get("NCCL_PROTO") for p in schedulers} == {"LL"}


WORKER_SETS_ITS_OWN = """\
import multiprocessing as mp, os, sys, time

def work(ready):
    os.environ["NCCL_PROTO"] = "Simple"  # set inside the worker, after it started
    del os.environ["NCCL_ALGO"]
    ready.set()
    time.sleep(60)

if __name__ == "__main__":
    ready = mp.get_context("spawn").Event()
    worker = mp.get_context("spawn").Process(target=work, args=(ready,))
    worker.start()
    ready.wait()
    os.environ["NCCL_DEBUG"] = "WARN"  # set in the main process after the worker was spawned
    open(sys.argv[1], "w").close()
    worker.join()
"""


def _reported(trace_dir: Path, pid: int, name: str) -> bool:
    report = trace_dir / f"{pid}.env.json"
    return report.exists() and name in json.loads(report.read_text() or "{}")


def test_the_trace_reports_what_each_process_set_in_itself_after_start(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(WORKER_SETS_ITS_OWN)
    trace_dir, marker = tmp_path / "trace", tmp_path / "ready"
    trace_dir.mkdir()
    env = traced_env({**os.environ, "NCCL_ALGO": "Ring"}, trace_dir, tmp_path)
    command = [sys.executable, "server.py", str(marker)]
    with subprocess.Popen(command, cwd=tmp_path, env=env, start_new_session=True) as server:
        try:
            while not marker.exists() and server.poll() is None:
                time.sleep(0.05)
            assert marker.exists(), "the server stopped before its worker set its variables"
            started = worker_env(server.pid)
            (worker,) = [p for p in started.processes if p.role == "scheduler"]
            while not (
                _reported(trace_dir, worker.pid, "NCCL_PROTO")
                and _reported(trace_dir, server.pid, "NCCL_DEBUG")
            ):
                assert server.poll() is None
                time.sleep(0.05)
        finally:
            os.killpg(server.pid, signal.SIGKILL)  # the worker too
    assert env_arrival("NCCL_PROTO", "Simple", started) == (0, 1, WHO)  # /proc: the start only
    assert env_arrival("NCCL_ALGO", "Ring", started) == (1, 1, WHO)
    later = after_start(started, trace_dir)
    assert later.after_start and "changed in its own os.environ" in later.source
    assert env_arrival("NCCL_PROTO", "Simple", later) == (1, 1, WHO)
    assert env_arrival("NCCL_ALGO", "Ring", later) == (0, 1, WHO)  # the worker removed it
    assert env_arrival("NCCL_DEBUG", "WARN", later) == (0, 1, WHO)  # only the main process has it
    assert later.values("NCCL_DEBUG")[server.pid] == "WARN"
    assert after_start(started, tmp_path) == started  # no reports: the start environment stands


LAZY_SERVER = """\
import http.server, sys

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"ok"
        if self.path == "/work":
            import lazy_kernel  # imported by the first request only, as kernels often are

            body = str(lazy_kernel.COST).encode()
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


def test_a_module_the_last_request_imported_is_in_the_trace(tmp_path: Path) -> None:
    """The benchmark may end a few milliseconds after a request imported a module: the trace
    is read only once every process has written its report on request (no dump period)."""
    import httpx

    (tmp_path / "server.py").write_text(LAZY_SERVER)
    (tmp_path / "lazy_kernel.py").write_text("COST = 3\n")
    trace_dir = tmp_path / "trace"
    trace_dir.mkdir()
    env = traced_env(dict(os.environ), trace_dir, tmp_path, inherited="")
    port = free_port()
    command = [sys.executable, "server.py", str(port)]
    with running_server(command, tmp_path, env, port, tmp_path / "s.log") as server:
        time.sleep(1.0)  # the trace's own dumps have settled into their slowest period
        assert not read_trace(trace_dir, tmp_path).imported("lazy_kernel.py")
        assert httpx.get(f"http://127.0.0.1:{port}/work").text == "3"
        wait_for_trace(trace_dir, [server.pid])
        assert read_trace(trace_dir, tmp_path).imported("lazy_kernel.py")


def _older_pythons() -> list[str]:
    """Interpreters of 3.8 and 3.9 on this machine (pyenv's, or on PATH)."""
    import glob
    import shutil

    found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.[89].*/bin/python")))
    return found + [p for p in (shutil.which("python3.8"), shutil.which("python3.9")) if p]


def test_the_hook_runs_in_a_target_on_an_older_python(tmp_path: Path) -> None:
    """The target's interpreter is not ours: the hook must load on 3.8 and up, or it would
    print "Error in sitecustomize" and skip the target's own sitecustomize (changing what runs).
    Where no older Python is installed, the hook at least compiles as 3.8 and postpones its
    annotations (3.9 cannot evaluate `str | None`)."""
    import ast

    from tools.proc.import_trace import HOOK_DIR

    source = (HOOK_DIR / "sitecustomize.py").read_text()
    tree = ast.parse(source, feature_version=(3, 8))
    assert any(
        isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(a.name == "annotations" for a in node.names)
        for node in tree.body
    )
    (tmp_path / "sitecustomize.py").write_text("import os\nos.environ['TARGET_OWN'] = '1'\n")
    for python in _older_pythons()[:2]:
        trace_dir = tmp_path / f"trace-{Path(python).parent.parent.name}"
        trace_dir.mkdir()
        env = traced_env(dict(os.environ), trace_dir, tmp_path, inherited=str(tmp_path))
        done = subprocess.run(
            [python, "-c", "import os, json; print(os.environ.get('TARGET_OWN'))"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.stdout.strip() == "1" and "Error in sitecustomize" not in done.stderr, python
        files = read_trace(trace_dir, Path("/")).files
        assert any(f.endswith("json/__init__.py") for f in files), python


def _run_traced(tmp_path: Path, script: str) -> tuple[Path, WorkerEnv, int]:
    """Run `script` (it writes argv[1] when ready) with the trace; its trace folder, its
    processes as they were once ready, and its pid (all of it killed before returning)."""
    (tmp_path / "server.py").write_text(script)
    trace_dir, marker = tmp_path / "trace", tmp_path / "ready"
    trace_dir.mkdir()
    env = traced_env(dict(os.environ), trace_dir, tmp_path, inherited=str(tmp_path))
    command = [sys.executable, "server.py", str(marker)]
    with subprocess.Popen(command, cwd=tmp_path, env=env, start_new_session=True) as server:
        try:
            report = trace_dir / f"{server.pid}.txt"  # the hook's first dump, soon after start
            while not (marker.exists() and report.exists()) and server.poll() is None:
                time.sleep(0.05)
            workers = worker_env(server.pid)
            wait_for_trace(trace_dir, [p.pid for p in workers.processes])
        finally:
            os.killpg(server.pid, signal.SIGKILL)
    return trace_dir, workers, server.pid


ISOLATED_WORKER = """\
import subprocess, sys, time

# a worker started without site (so without any sitecustomize): the trace cannot see it
worker = subprocess.Popen([sys.executable, "-S", "-c", "import worker_only, time; time.sleep(60)"])
import server_only
open(sys.argv[1], "w").close()
worker.wait()
"""


def test_a_file_is_not_dropped_as_never_imported_while_a_python_process_left_no_report(
    tmp_path: Path,
) -> None:
    from tools.repo.candidates import Candidate

    for name in ("server_only", "worker_only"):
        (tmp_path / f"{name}.py").write_text("VALUE = 1\n")
    trace_dir, workers, pid = _run_traced(tmp_path, ISOLATED_WORKER)
    facts = Facts(trace=read_trace(trace_dir, tmp_path), workers=workers)
    (worker,) = [p.pid for p in workers.processes if p.pid != pid]
    assert untraced(facts) == [worker]
    candidate = Candidate(id="w", kind="hunk", file="worker_only.py", patch="")
    assert assess(candidate, facts, None, []).on_path is None  # kept: the worker may import it
    facts.workers = workers.model_copy(update={"processes": workers.processes[:1]})
    assert assess(candidate, facts, None, []).reason == "file never imported"


FORKING_SERVER = """\
import multiprocessing as mp, sys, time

def work():
    time.sleep(0.3)
    import forked_only  # after the fork: only this child has it
    time.sleep(60)

if __name__ == "__main__":
    child = mp.get_context("fork").Process(target=work)
    child.start()
    time.sleep(1.0)
    open(sys.argv[1], "w").close()
    child.join()
"""


def test_a_forked_child_reports_what_it_imports_after_the_fork(tmp_path: Path) -> None:
    """A fork keeps only the thread that forked: the hook starts its own again in the child,
    or every file would be kept for want of the child's report."""
    (tmp_path / "forked_only.py").write_text("VALUE = 1\n")
    trace_dir, workers, _ = _run_traced(tmp_path, FORKING_SERVER)
    trace = read_trace(trace_dir, tmp_path)
    assert len(workers.processes) == 2 and trace.pids == sorted(p.pid for p in workers.processes)
    assert trace.imported("forked_only.py")
    assert untraced(Facts(trace=trace, workers=workers)) == []


def test_a_script_run_as_main_is_in_the_trace_after_it_returns(tmp_path: Path) -> None:
    """CPython takes `__file__` off `__main__` once the script has returned, before atexit
    dumps the trace: a changed bench script must not look never imported."""
    tree, trace_dir = tmp_path / "tree", tmp_path / "trace"
    (tree / "tools").mkdir(parents=True)
    trace_dir.mkdir()
    (tree / "tools/bench.py").write_text("print('work_ms: 1')\n")  # over before a dump period
    env = traced_env({}, trace_dir, tree)
    done = subprocess.run(
        [sys.executable, "tools/bench.py"], cwd=tree, env={**os.environ, **env}, timeout=60
    )
    assert done.returncode == 0
    assert read_trace(trace_dir, tree).imported("tools/bench.py")


def test_the_hook_runs_in_a_process_whose_working_folder_is_gone(tmp_path: Path) -> None:
    """os.getcwd() fails there: the hook must neither complain nor stop the target."""
    (tmp_path / "gone").mkdir()
    env = {**os.environ, **traced_env({}, tmp_path / "trace", tmp_path)}
    done = subprocess.run(
        f"cd gone && rmdir ../gone && {sys.executable} -c \"print('ran')\"",
        shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout == "ran\n", done.stderr
    assert "sitecustomize" not in done.stderr, done.stderr
    assert read_trace(tmp_path / "trace", tmp_path).processes == 1
