"""Experiments as Ray tasks: K at once, on whichever node has what one experiment needs.

`[cluster] ray` says which Ray: "local" (a Ray started for this run on this machine), "auto"
(the cluster this machine belongs to) or an address ("ray://head:10001", "head:6379"). Each
task makes one experiment (worktree, launch, bench, stop) on its node, in a folder of its own,
and sends back the result with every file the experiment wrote (server logs, import traces,
bench output): the session keeps them as if the launch had run here. The target's repository
is at the same path on every node (a shared file system, or a clone made there).

Stopping: a round interrupted (budget, Ctrl-C, an error of ours) cancels its tasks with
force, which kills their worker processes; each server's group keeper then stops the server
(tools/proc/group_keeper.py). A driver killed outright ends its Ray job, and Ray kills the
job's workers the same way.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tools.cluster.attempt import LaunchError, attempt
from tools.config import ClusterSection
from tools.errors import ToolError
from tools.experiment import ExperimentOptions, ExperimentResult, ExperimentSpec
from tools.repo.target import Target


@dataclass(frozen=True)
class Job:
    spec: ExperimentSpec
    out: Path  # the launch's folder in the session (the node writes its own and sends it)
    options: ExperimentOptions


@dataclass(frozen=True)
class JobOutcome:
    result: ExperimentResult | LaunchError
    retried: str | None  # why a first attempt was discarded
    node: str  # the Ray node it ran on (its id, shortened, and host name)


def _run_job(target: Target, job: Job) -> tuple[Any, str | None, str, dict[str, bytes], str]:
    """On the node: the experiment in a folder of its own; its files come back as bytes."""
    import socket

    import ray

    from tools.temp_folders import temp_folder

    node = f"{ray.get_runtime_context().get_node_id()[:8]}@{socket.gethostname()}"
    folder = temp_folder("job")
    try:
        out = folder / job.out.name
        result, retried = attempt(target, job.spec, out, job.options)
        files = {
            str(path.relative_to(folder)): path.read_bytes()
            for path in sorted(folder.rglob("*"))
            if path.is_file()
        }
        return result, retried, node, files, str(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class RayPool:
    """Experiments on a Ray cluster, `slots` at once."""

    def __init__(self, section: ClusterSection) -> None:
        try:
            import ray
        except ImportError:
            raise ToolError("[cluster] ray needs Ray: pip install 'debug-agent[ray]'") from None
        self.ray = ray
        self.owned = not ray.is_initialized()  # else a caller's Ray (lab bench): left running
        if self.owned:
            connect(section.ray or "local")
        if self.owned and section.ray in (None, "local", "auto"):  # no autoscaler to wait for
            self._check_fits(section.resources)
        resources = dict(section.resources)
        cpus = resources.pop("CPU", 0)
        gpus = resources.pop("GPU", 0)
        self.task = ray.remote(_run_job).options(
            num_cpus=cpus, num_gpus=gpus, resources=resources or None, max_retries=0
        )

    def _check_fits(self, wanted: dict[str, float]) -> None:
        from tools.cluster.check import no_node_fits

        why = no_node_fits(self.ray.nodes(), wanted)
        if why:
            self.close()
            raise ToolError(why)

    def run(self, target: Target, jobs: list[Job]) -> list[JobOutcome]:
        """Every job, in the order given whatever order they finish in."""
        ray = self.ray
        bare = [replace(job, options=replace(job.options, progress=None)) for job in jobs]
        refs = [self.task.remote(target, job) for job in bare]
        try:
            replies = ray.get(refs)
        except BaseException:
            for ref in refs:
                ray.cancel(ref, force=True)
            raise
        return [_receive(job, *reply) for job, reply in zip(jobs, replies, strict=True)]

    def close(self) -> None:
        if self.owned and self.ray.is_initialized():
            self.ray.shutdown()


def _receive(
    job: Job, result: Any, retried: str | None, node: str, files: dict[str, bytes], there: str
) -> JobOutcome:
    """The node's files written into the session, and its paths in the result made ours."""
    here = job.out.parent
    for name, data in files.items():
        path = here / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    if isinstance(result, ExperimentResult):
        text = result.model_dump_json().replace(there, str(here))
        result = ExperimentResult.model_validate_json(text)
    else:
        result = type(result)(str(result).replace(there, str(here)))
    return JobOutcome(result=result, retried=retried, node=node)


def connect(address: str) -> None:
    """Ray for this process: "local" starts one here; else the cluster at `address`."""
    import ray

    try:
        ray.init(
            address=None if address == "local" else address,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
            runtime_env={"env_vars": {"PYTHONPATH": _our_root()}},
        )
    except (ConnectionError, RuntimeError, ValueError) as e:
        line = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ToolError(f"[cluster] ray = {address!r}: {line}") from None


def _our_root() -> str:
    """Where debug-agent's own code is, for the workers to import it (a node shares it)."""
    root = str(Path(__file__).resolve().parents[2])
    return os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)


@contextmanager
def ray_pool(section: ClusterSection) -> Iterator[RayPool]:
    pool = RayPool(section)
    try:
        yield pool
    finally:
        pool.close()
