"""Starts the scheduler processes (multiprocessing `spawn`, one per TP rank) and the HTTP server."""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import queue
import time
import uuid

from sglang.srt.managers.channel import Channel
from sglang.srt.managers.scheduler import run_scheduler_process

logger = logging.getLogger(__name__)

SCHEDULER_START_TIMEOUT_S = 120


class SchedulerError(RuntimeError):
    pass


def _set_envs_and_config(server_args) -> None:
    os.environ.setdefault("NCCL_CUMEM_ENABLE", "0")
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "8"
    os.environ["SGLANG_RUN_ID"] = uuid.uuid4().hex[:12]
    mp.set_start_method("spawn", force=True)


class Engine:
    """The main process's handle on its schedulers."""

    def __init__(self, server_args) -> None:
        self.server_args = server_args
        ctx = mp.get_context("spawn")
        self.req_queue = Channel(ctx)
        self.out_queue = Channel(ctx)
        self.procs: list[mp.process.BaseProcess] = []
        for tp_rank in range(server_args.tp_size):
            proc = ctx.Process(
                target=run_scheduler_process,
                args=(server_args, tp_rank, self.req_queue, self.out_queue, os.getpid()),
                name=f"sglang::scheduler_TP{tp_rank}",
                daemon=True,
            )
            proc.start()
            self.procs.append(proc)
        try:
            self._wait_ready()
        except BaseException:
            self.shutdown()
            raise

    def _wait_ready(self) -> None:
        ready: set[int] = set()
        deadline = time.monotonic() + SCHEDULER_START_TIMEOUT_S
        while len(ready) < len(self.procs):
            try:
                msg = self.out_queue.get(timeout=0.5)
            except queue.Empty:
                dead = [p.name for p in self.procs if not p.is_alive()]
                if dead:
                    raise SchedulerError(f"{dead[0]} exited during start-up") from None
                if time.monotonic() > deadline:
                    raise SchedulerError("schedulers did not start in time") from None
                continue
            if msg[0] == "error":
                raise SchedulerError(f"Scheduler TP{msg[1]} failed: {msg[2]}")
            if msg[0] == "ready":
                ready.add(msg[1])

    def shutdown(self) -> None:
        self.req_queue.put(("shutdown",))
        deadline = time.monotonic() + 2.0
        for proc in self.procs[1:]:  # only TP0 reads the queue; the other ranks just wait
            proc.terminate()
        for proc in self.procs:
            proc.join(timeout=max(0.0, deadline - time.monotonic()))
        for proc in self.procs:
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=1.0)


def launch_server(server_args) -> None:
    from sglang.srt.entrypoints.http_server import serve

    logger.info(f"server_args={server_args}")
    _set_envs_and_config(server_args)
    engine = Engine(server_args)
    try:
        serve(server_args, engine)
    finally:
        engine.shutdown()
