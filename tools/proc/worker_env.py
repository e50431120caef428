"""The environment each process of a running server really has ("did NCCL_PROTO arrive?").

Read from /proc/PID/environ through psutil: that is the environment the process was started
with. A variable a process sets in its own os.environ after it started is not visible there;
variables set by a parent before it spawned its workers (sitecustomize, launcher patches) are.
A launch with the import trace also has what each process changed in its own os.environ
afterwards (tools/proc/hooks/sitecustomize.py): `after_start` lays that over the start.
"""

from __future__ import annotations

from pathlib import Path

import psutil
from pydantic import BaseModel, Field

from tools.errors import ToolError
from tools.json_text import parse_json
from tools.secrets import fingerprint, mask, mask_text

PREFIXES = ("NCCL_", "SGLANG_", "VLLM_", "CUDA_", "PYTHON", "TORCH_", "OMP_", "MASTER_")
# GPU workers that a process pool or a cluster started: a Ray actor (`ray::RayWorkerWrapper`,
# vLLM's Ray executor) or a process vLLM titled (`VLLM::Worker_TP0`)
WORKER_MARKS = ("ray::", "RayWorkerWrapper", "VLLM::Worker", "VllmWorker")


class ProcessEnv(BaseModel):
    pid: int
    ppid: int
    role: str  # "main", "scheduler", or the process name
    cmdline: str
    env: dict[str, str]  # masked, for reading
    # a keyed hash of each value as the process had it: arrival is judged on these, before
    # masking (a masked URL's password and a masked setting cannot be compared); pairs, not a
    # mapping, so that masking by key never takes a hash under HF_TOKEN for the token
    fingerprints: list[tuple[str, str]] = []
    python: bool | None = None  # runs a Python interpreter (its executable's name); None unknown

    def fingerprint(self, name: str) -> str | None:
        return next((value for key, value in self.fingerprints if key == name), None)


def is_python(exe: str | None) -> bool | None:
    """Whether an executable is a Python interpreter (a process renamed by setproctitle still
    runs one); None when it could not be read."""
    if not exe:
        return None
    name = exe.rsplit("/", 1)[-1]
    return name.startswith(("python", "pypy"))


class WorkerEnv(BaseModel):
    root_pid: int
    processes: list[ProcessEnv]
    source: str = "/proc/PID/environ (the environment each process was started with)"
    # what was read: variables with these prefixes, and these names (all others unknown)
    prefixes: list[str] = Field(default_factory=lambda: list(PREFIXES))
    names: list[str] = Field(default_factory=list)
    after_start: bool = False  # env includes what processes set in their own os.environ later

    def recorded(self, name: str) -> bool:
        """Whether `name` was read at all: if not, "unset" would be a guess."""
        return name.startswith(tuple(self.prefixes)) or name in self.names

    def values(self, name: str) -> dict[int, str | None]:
        """The value of `name` in each process (None where it is unset)."""
        return {p.pid: p.env.get(name) for p in self.processes}

    def reached_all(self, name: str, value: str | None = None) -> bool:
        got = self.values(name).values()
        return all(v is not None and (value is None or v == value) for v in got)


def _role(pid: int, name: str, cmdline: list[str], root_pid: int) -> str:
    if pid == root_pid:
        return "main"
    text = " ".join(cmdline)
    if "multiprocessing" in text and "spawn_main" in text:
        return "scheduler"
    if "resource_tracker" in text:
        return "resource_tracker"
    if any(mark in text or mark in name for mark in WORKER_MARKS):
        return "gpu_worker"
    return name


def process_env(
    pid: int,
    ppid: int,
    name: str,
    cmdline: list[str],
    environ: dict[str, str],
    root_pid: int,
    names: frozenset[str] = frozenset(),
    exe: str | None = None,
) -> ProcessEnv:
    """One process's record: its role, its command line, the variables of PREFIXES and
    `names` (the ones an investigation asks about), masked."""
    env = {k: v for k, v in environ.items() if k.startswith(PREFIXES) or k in names}
    return ProcessEnv(
        pid=pid,
        ppid=ppid,
        role=_role(pid, name, cmdline, root_pid),
        cmdline=mask_text(" ".join(cmdline))[:300],
        env=dict(sorted(mask(env).items())),
        fingerprints=[(k, fingerprint(v)) for k, v in sorted(env.items())],
        python=is_python(exe),
    )


def worker_env(root_pid: int, names: frozenset[str] = frozenset()) -> WorkerEnv:
    try:
        root = psutil.Process(root_pid)
        tree = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        raise ToolError(f"no process {root_pid}: is the server running?") from None
    processes = []
    for proc in tree:
        try:
            processes.append(
                process_env(
                    proc.pid,
                    proc.ppid(),
                    proc.name(),
                    proc.cmdline(),
                    proc.environ(),
                    root_pid,
                    names,
                    _exe(proc),
                )
            )
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
        except psutil.AccessDenied:
            raise ToolError(f"not allowed to read the environment of pid {proc.pid}") from None
    return WorkerEnv(root_pid=root_pid, processes=processes, names=sorted(names))


def _exe(proc: psutil.Process) -> str | None:
    try:
        return proc.exe()
    except (psutil.AccessDenied, OSError):
        return None


def _changes(report: Path) -> dict[str, str | None] | None:
    """One process's own os.environ changes after start ({name: value or None}), or None."""
    try:
        changes = parse_json(report.read_text())
    except (OSError, ValueError):
        return None
    return changes if isinstance(changes, dict) else None


def after_start(workers: WorkerEnv, trace_dir: Path) -> WorkerEnv:
    """`workers` with what each process set, changed or removed in its own os.environ after it
    started, for the variables that were read (the import trace's <pid>.env.json files in
    `trace_dir`). Unchanged where no process left one (a launch without the trace)."""
    processes, found = [], False
    for process in workers.processes:
        changes = _changes(trace_dir / f"{process.pid}.env.json")
        env, prints = dict(process.env), dict(process.fingerprints)
        for name, value in (changes or {}).items():
            if not workers.recorded(name):
                continue
            if value is None:
                env.pop(name, None)
                prints.pop(name, None)
            else:
                env[name] = mask({name: str(value)})[name]
                prints[name] = fingerprint(str(value))
        found |= changes is not None
        update = {"env": dict(sorted(env.items())), "fingerprints": sorted(prints.items())}
        processes.append(process.model_copy(update=update))
    if not found:
        return workers
    source = workers.source + ", then what each process changed in its own os.environ"
    return workers.model_copy(
        update={"processes": processes, "after_start": True, "source": source}
    )
