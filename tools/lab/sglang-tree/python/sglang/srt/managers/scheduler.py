"""One scheduler process per tensor-parallel rank. TP0 batches the requests and logs the batches.

In the lab all ranks load the model, but only TP0 drives the simulated GPU: on real hardware
the other ranks run the same forwards in lockstep, which costs no extra time.
"""

from __future__ import annotations

import logging
import os
import queue
import random
import signal
import threading
import time
from dataclasses import dataclass

import labgpu

from sglang.srt.distributed import initialize_model_parallel
from sglang.srt.model_executor.forward_batch_info import ForwardBatch, ForwardMode
from sglang.srt.model_executor.model_runner import ModelRunner
from sglang.srt.utils import configure_logger

logger = logging.getLogger(__name__)

SCHEDULE_OVERHEAD_MS = 0.6  # CPU work of one scheduler iteration, between forwards


@dataclass
class Req:
    rid: str
    input_len: int
    max_new_tokens: int
    stream: bool
    arrival_ms: float
    output_len: int = 0
    verify_ct: int = 0
    correct_drafts: int = 0
    proposed_drafts: int = 0

    def meta_info(self, now_ms: float, spec: bool) -> dict:
        meta = {
            "id": self.rid,
            "prompt_tokens": self.input_len,
            "completion_tokens": self.output_len,
            "cached_tokens": 0,
            "e2e_latency": (now_ms - self.arrival_ms) / 1000.0,
        }
        if self.output_len >= self.max_new_tokens:
            meta["finish_reason"] = {"type": "length", "length": self.max_new_tokens}
        else:
            meta["finish_reason"] = None
        if spec:
            meta["spec_verify_ct"] = self.verify_ct
            meta["spec_accept_length"] = self.output_len / max(1, self.verify_ct)
            meta["spec_accept_rate"] = self.correct_drafts / max(1, self.proposed_drafts)
            meta["spec_num_correct_drafts"] = self.correct_drafts
            meta["spec_num_proposed_drafts"] = self.proposed_drafts
        return meta


class Scheduler:
    def __init__(self, server_args, tp_rank: int, out_queue) -> None:
        self.server_args = server_args
        self.tp_rank = tp_rank
        self.out_queue = out_queue
        self.clock = labgpu.Clock()
        initialize_model_parallel(server_args.tp_size, tp_rank,
                                  not server_args.disable_custom_all_reduce)
        self.runner = ModelRunner(server_args, server_args.model_path, server_args.tp_size,
                                  self.clock)
        self.spec_worker = None
        if server_args.speculative_algorithm is not None:
            from sglang.srt.speculative.eagle_worker import EAGLEWorker

            self.spec_worker = EAGLEWorker(server_args, self.runner,
                                           random.Random(self.clock.rng.random()))
        self.runner.capture_cuda_graphs()
        self.max_total_num_tokens = int(labgpu.memory_gb() * 11000)
        self.max_running_requests = server_args.max_running_requests or 2048
        self.waiting: list[Req] = []
        self.running: list[Req] = []
        self.forward_ct = 0
        self._log_tokens = 0
        self._log_verify = 0
        self._log_correct = 0
        self._log_start_ms = 0.0

    def log_startup(self) -> None:
        logger.info(
            "max_total_num_tokens=%d, chunked_prefill_size=%d, max_prefill_tokens=%d, "
            "max_running_requests=%d, context_len=%d, available_gpu_mem=%.2f GB",
            self.max_total_num_tokens, self.server_args.chunked_prefill_size,
            self.server_args.max_prefill_tokens, self.max_running_requests,
            self.runner.model_config.context_len, labgpu.memory_gb() * 0.12)

    def event_loop(self, req_queue) -> None:
        while True:
            if not self.receive(req_queue, block=not self.running):
                return
            if self.waiting:
                self.run_prefill()
            if self.running:
                self.run_decode()

    def receive(self, req_queue, block: bool) -> bool:
        """Move new requests to the waiting list; False when the server shuts down."""
        while True:
            try:
                msg = req_queue.get(timeout=0.5) if block else req_queue.get_nowait()
            except queue.Empty:
                if block:
                    continue
                return True
            if msg[0] == "shutdown":
                return False
            if msg[0] == "start_profile":  # SGLang's torch profiler, on the simulated GPU
                labgpu.start_profile(msg[1], msg[2], self.tp_rank, msg[3])
                continue
            if msg[0] == "stop_profile":
                self.out_queue.put(("profiled", labgpu.stop_profile()))
                continue
            _, rid, input_len, max_new_tokens, stream = msg
            self.waiting.append(Req(rid, input_len, max_new_tokens, stream, self.clock.now_ms))
            block = False

    def run_prefill(self) -> None:
        room = self.max_running_requests - len(self.running)
        batch, self.waiting = self.waiting[:room], self.waiting[room:]
        if not batch:
            return
        tokens = sum(r.input_len for r in batch)
        fb = ForwardBatch(ForwardMode.EXTEND, len(batch), tokens, tokens // len(batch))
        spent, graph = self.runner.forward(fb)
        if self.spec_worker is not None:
            self.spec_worker.draft.forward(fb)
        logger.info(
            "Prefill batch, #new-seq: %d, #new-token: %d, #cached-token: 0, token usage: %.2f, "
            "#running-req: %d, #queue-req: %d, #pending-token: 0, cuda graph: %s, "
            "input throughput (token/s): %.2f",
            len(batch), tokens, self._token_usage(), len(self.running), len(self.waiting),
            graph, tokens / max(spent, 1e-9) * 1000.0)
        self.running.extend(batch)
        self._advance(batch, [1] * len(batch))

    def run_decode(self) -> None:
        bs = len(self.running)
        seq_len = sum(r.input_len + r.output_len for r in self.running) // bs
        self.clock.run(SCHEDULE_OVERHEAD_MS)
        if self.spec_worker is None:
            _, graph = self.runner.forward(ForwardBatch(ForwardMode.DECODE, bs, bs, seq_len))
            gained = [1] * bs
        else:
            out = self.spec_worker.forward_batch_generation(bs, seq_len)
            graph, gained = out.can_run_cuda_graph, out.accepted
            proposed = self.spec_worker.num_draft_tokens - 1
            for req, n in zip(self.running, gained, strict=True):
                req.verify_ct += 1
                req.correct_drafts += n - 1
                req.proposed_drafts += proposed
            self._log_verify += bs
            self._log_correct += sum(gained) - bs
        self.forward_ct += 1
        self._log_tokens += sum(gained)
        if self.forward_ct % self.server_args.decode_log_interval == 0:
            self.log_decode_stats(graph)
        self._advance(list(self.running), gained)

    def _advance(self, reqs: list[Req], gained: list[int]) -> None:
        spec = self.spec_worker is not None
        for req, n in zip(reqs, gained, strict=True):
            n = min(n, req.max_new_tokens - req.output_len)
            req.output_len += n
            finished = req.output_len >= req.max_new_tokens
            if finished or req.stream:
                meta = req.meta_info(self.clock.now_ms, spec)
                self.out_queue.put(("output", req.rid, n, meta, finished))
            if finished:
                self.running.remove(req)

    def _token_usage(self) -> float:
        used = sum(r.input_len + r.output_len for r in self.running)
        return used / self.max_total_num_tokens

    def log_decode_stats(self, graph: bool) -> None:
        elapsed_s = (self.clock.now_ms - self._log_start_ms) / 1000.0
        throughput = self._log_tokens / max(elapsed_s, 1e-9)
        spec = ""
        if self.spec_worker is not None:
            accept_len = self._log_tokens / max(1, self._log_verify)
            proposed = self._log_verify * (self.spec_worker.num_draft_tokens - 1)
            spec = (f"accept len: {accept_len:.2f}, "
                    f"accept rate: {self._log_correct / max(1, proposed):.2f}, ")
        tokens = sum(r.input_len + r.output_len for r in self.running)
        logger.info(
            "Decode batch, #running-req: %d, #token: %d, token usage: %.2f, %scuda graph: %s, "
            "gen throughput (token/s): %.2f, #queue-req: %d",
            len(self.running), tokens, self._token_usage(), spec, graph, throughput,
            len(self.waiting))
        self.out_queue.put(("stats", {
            "last_gen_throughput": throughput,
            "avg_spec_accept_length": self._log_tokens / max(1, self._log_verify)
            if self.spec_worker is not None else None,
        }))
        self._log_tokens = self._log_verify = self._log_correct = 0
        self._log_start_ms = self.clock.now_ms


def _exit_with_parent(parent_pid: int) -> None:
    """A scheduler never outlives its server: exit as soon as the parent is gone."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.2)
        os._exit(0)

    threading.Thread(target=watch, daemon=True, name="parent-watchdog").start()


def run_scheduler_process(server_args, tp_rank: int, req_queue, out_queue,
                          parent_pid: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    _exit_with_parent(parent_pid)
    configure_logger(prefix=f" TP{tp_rank}" if server_args.tp_size > 1 else "")
    try:
        scheduler = Scheduler(server_args, tp_rank, out_queue)
    except Exception as e:  # the main process reports it and exits
        logger.exception("Scheduler hit an exception")
        out_queue.put(("error", tp_rank, f"{type(e).__name__}: {e}"))
        return
    if tp_rank == 0:
        scheduler.log_startup()
    out_queue.put(("ready", tp_rank, os.getpid()))
    if tp_rank == 0:
        scheduler.event_loop(req_queue)
    else:
        while True:
            time.sleep(3600)
