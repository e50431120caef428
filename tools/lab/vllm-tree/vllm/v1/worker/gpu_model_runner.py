"""The GPU model runner: loads the served model and its attention backend, runs forwards."""

from vllm.attention.selector import get_attn_backend
from vllm.config import MODELS
from vllm.logger import init_logger
from vllm.model_executor.models.registry import resolve_model_cls

logger = init_logger(__name__)


class GPUModelRunner:
    def __init__(self, model: str, tp_size: int, clock) -> None:
        self.clock = clock
        architecture, layers, hidden, _ = MODELS[model]
        logger.info("Starting to load model %s...", model)
        backend = get_attn_backend()
        self.model = resolve_model_cls(architecture)(layers, hidden, tp_size, backend)
        spent = clock.run(900.0)
        logger.info(
            "Model loading took %.4f GiB and %.6f seconds", 15.0 / tp_size, spent / 1000.0
        )

    def capture_model(self) -> None:
        spent = sum(self.execute(bs, 1024, True) for bs in (1, 2, 4, 8))
        logger.info("Graph capturing finished in %.0f secs, took %.2f GiB", spent / 1000, 0.42)

    def execute(self, num_tokens: int, seq_len: int, decode: bool) -> float:
        return self.clock.run(self.model.forward_ms(num_tokens, seq_len, decode))
