"""Loads a model on this rank and runs forward passes, replaying a CUDA graph where it can."""

from __future__ import annotations

import logging

import labgpu

from sglang.srt.configs.model_config import get_model_config
from sglang.srt.layers.attention.attention_registry import create_attention_backend
from sglang.srt.model_executor.forward_batch_info import ForwardBatch, ForwardMode
from sglang.srt.models.registry import get_model_class

logger = logging.getLogger(__name__)

GRAPH_REPLAY_MS = 0.25  # one graph launch for the whole forward
EAGER_LAUNCH_MS_PER_LAYER = 0.02  # kernel launches when the forward runs eagerly


def cuda_graph_batch_sizes(max_bs: int) -> list[int]:
    ladder = list(range(1, 9)) + list(range(10, 33, 2)) + list(range(40, 65, 4))
    ladder += list(range(72, 257, 8)) + list(range(272, 513, 16))
    return [bs for bs in ladder if bs <= max_bs]


class ModelRunner:
    def __init__(self, server_args, model_path: str, tp_size: int, clock: labgpu.Clock,
                 attention_backend: str | None = None) -> None:
        self.model_config = get_model_config(model_path)
        self.tp_size = tp_size
        self.clock = clock
        self.use_mla_backend = self.model_config.use_mla
        self.kv_cache_dtype = server_args.kv_cache_dtype
        logger.info("Load weight begin. avail mem=%.2f GB", labgpu.memory_gb() - 1.2)
        self.attn_backend = create_attention_backend(
            attention_backend or server_args.attention_backend, self)
        model_class = get_model_class(self.model_config.architecture)
        self.model = model_class(self.model_config, self.attn_backend, tp_size)
        logger.info("Load weight end. type=%s, dtype=torch.bfloat16, avail mem=%.2f GB",
                    type(self.model).__name__, labgpu.memory_gb() * 0.31)
        self.graph_batch_sizes: list[int] = []
        if not server_args.disable_cuda_graph:
            self.graph_batch_sizes = cuda_graph_batch_sizes(server_args.cuda_graph_max_bs)

    def capture_cuda_graphs(self) -> None:
        if not self.graph_batch_sizes:
            return
        logger.info("Capture cuda graph begin. This can take up to several minutes. "
                    "avail mem=%.2f GB", labgpu.memory_gb() * 0.3)
        logger.info("Capture cuda graph end. Time elapsed: %.2f s. mem usage=%.2f GB. "
                    "avail mem=%.2f GB.", 4.1 + 0.02 * len(self.graph_batch_sizes), 0.71,
                    labgpu.memory_gb() * 0.29)

    def can_run_cuda_graph(self, batch: ForwardBatch) -> bool:
        # graphs are captured for one-token decode only; verify and extend run eagerly
        return batch.mode is ForwardMode.DECODE and batch.batch_size in self.graph_batch_sizes

    def forward(self, batch: ForwardBatch) -> tuple[float, bool]:
        """Run one forward; return (model milliseconds spent, whether a CUDA graph was used)."""
        graph = self.can_run_cuda_graph(batch)
        launch = GRAPH_REPLAY_MS if graph else EAGER_LAUNCH_MS_PER_LAYER * (
            self.model_config.num_layers)
        return self.clock.run(self.model.forward(batch) + launch), graph
