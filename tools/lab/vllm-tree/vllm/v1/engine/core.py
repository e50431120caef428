"""The V1 engine core: schedules requests (continuous batching), runs each step on the
executor's workers, and logs the engine's stats every few seconds."""

import queue
import threading
import time
from dataclasses import dataclass, field

from vllm import __version__
from vllm.executor.ray_distributed_executor import RayDistributedExecutor
from vllm.logger import init_logger

logger = init_logger(__name__)
STATS_INTERVAL_S = 5.0


@dataclass
class Request:
    input_len: int
    max_tokens: int
    out: queue.Queue = field(default_factory=queue.Queue)  # a token count per step; None: done
    produced: int = 0


class EngineCore:
    def __init__(self, config) -> None:
        start = time.monotonic()
        logger.info("Initializing a V1 LLM engine (v%s) with config: %s", __version__, config)
        self.config = config
        self.executor = RayDistributedExecutor(config)
        self.kv_tokens = 452_800 // config.tensor_parallel_size * config.tensor_parallel_size
        logger.info("GPU KV cache size: %s tokens", f"{self.kv_tokens:,}")
        logger.info(
            "Maximum concurrency for %s tokens per request: %.2fx",
            f"{config.max_seq_len:,}",
            self.kv_tokens / config.max_seq_len,
        )
        logger.info(
            "init engine (profile, create kv cache, warmup model) took %.2f seconds",
            time.monotonic() - start,
        )
        self.incoming: queue.Queue[Request] = queue.Queue()
        self.running: list[Request] = []
        self.prompt_tokens = self.generated = 0
        self.last_stats = time.monotonic()
        threading.Thread(target=self._loop, daemon=True, name="engine-core").start()

    def add_request(self, input_len: int, max_tokens: int) -> Request:
        request = Request(input_len, max_tokens)
        self.incoming.put(request)
        return request

    def _loop(self) -> None:
        while True:
            new = self._take(block=not self.running)
            if new:
                tokens = sum(r.input_len for r in new)
                self.executor.execute_model(tokens, tokens // len(new), decode=False)
                self.prompt_tokens += tokens
                self.running += new
                self._emit(new)
            elif self.running:
                seq_len = sum(r.input_len + r.produced for r in self.running) // len(self.running)
                self.executor.execute_model(len(self.running), seq_len, decode=True)
                self._emit(list(self.running))
            self._stats()

    def _take(self, block: bool) -> list[Request]:
        taken = []
        try:
            taken.append(self.incoming.get(timeout=0.5) if block else self.incoming.get_nowait())
            while len(self.running) + len(taken) < self.config.max_num_seqs:
                taken.append(self.incoming.get_nowait())
        except queue.Empty:
            pass
        return taken

    def _emit(self, requests: list[Request]) -> None:
        for request in requests:
            request.produced += 1
            self.generated += 1
            request.out.put(1)
            if request.produced >= request.max_tokens:
                request.out.put(None)
                self.running.remove(request)

    def _stats(self) -> None:
        now = time.monotonic()
        elapsed = now - self.last_stats
        if elapsed < STATS_INTERVAL_S:
            return
        used = sum(r.input_len + r.produced for r in self.running)
        logger.info(
            "Engine 000: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f "
            "tokens/s, Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %.1f%%, "
            "Prefix cache hit rate: %.1f%%",
            self.prompt_tokens / elapsed,
            self.generated / elapsed,
            len(self.running),
            self.incoming.qsize(),
            100.0 * used / self.kv_tokens,
            0.0,
        )
        self.prompt_tokens = self.generated = 0
        self.last_stats = now
