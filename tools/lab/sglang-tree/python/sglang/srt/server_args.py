"""The server's arguments: the command line, then the defaults resolved for the model and GPU."""

from __future__ import annotations

import argparse
import dataclasses
import logging

from sglang.srt.configs.model_config import get_model_config
from sglang.srt.utils import is_sm90_supported, is_sm100_supported, is_sm120_supported

logger = logging.getLogger(__name__)

ATTENTION_BACKEND_CHOICES = [
    "triton", "flashinfer", "fa3", "flashmla", "trtllm_mla", "torch_native",
]
SPECULATIVE_ALGORITHMS = ["EAGLE", "EAGLE3", "NEXTN", "STANDALONE"]


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    tokenizer_path: str | None = None
    trust_remote_code: bool = False
    host: str = "127.0.0.1"
    port: int = 30000
    dtype: str = "auto"
    quantization: str | None = None
    kv_cache_dtype: str = "auto"
    mem_fraction_static: float | None = None
    max_running_requests: int | None = None
    chunked_prefill_size: int = 16384
    max_prefill_tokens: int = 16384
    page_size: int = 1
    tp_size: int = 1
    dp_size: int = 1
    ep_size: int = 1
    random_seed: int | None = None
    log_level: str = "info"
    decode_log_interval: int = 40
    attention_backend: str | None = None
    prefill_attention_backend: str | None = None
    decode_attention_backend: str | None = None
    mm_attention_backend: str | None = None
    moe_runner_backend: str = "auto"
    speculative_algorithm: str | None = None
    speculative_draft_model_path: str | None = None
    speculative_num_steps: int | None = None
    speculative_eagle_topk: int | None = None
    speculative_num_draft_tokens: int | None = None
    disable_cuda_graph: bool = False
    cuda_graph_max_bs: int | None = None
    disable_custom_all_reduce: bool = False
    enable_metrics: bool = False
    api_key: str | None = None

    def __post_init__(self) -> None:
        if self.tokenizer_path is None:
            self.tokenizer_path = self.model_path
        self._handle_model_specific_adjustments()
        self._handle_attention_backend()
        self._handle_speculative_decoding()
        self._handle_cuda_graph()

    def _handle_model_specific_adjustments(self) -> None:
        arch = get_model_config(self.model_path).architecture
        if arch in ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM"):
            if is_sm100_supported() and self.attention_backend is None:
                self.attention_backend = "trtllm_mla"
                logger.info("Use trtllm_mla as attention backend on sm100 for %s", arch)
        elif arch == "Glm4MoeForCausalLM":
            if is_sm100_supported():
                if self.quantization is None:
                    self.quantization = "modelopt_fp4"
                self.moe_runner_backend = "flashinfer_trtllm"
                logger.info("Use flashinfer_trtllm as MoE runner backend for %s", arch)

    def _handle_attention_backend(self) -> None:
        if self.attention_backend is None:
            use_mla = get_model_config(self.model_path).use_mla
            if is_sm90_supported():
                self.attention_backend = "fa3"
            elif is_sm100_supported() and not use_mla:
                self.attention_backend = "flashinfer"
            elif is_sm120_supported():
                self.attention_backend = "triton"  # no fa3 / trtllm kernels for sm120 yet
            else:
                self.attention_backend = "triton"
            logger.info(
                "Attention backend not specified. Use %s backend by default.",
                self.attention_backend,
            )
        if self.attention_backend not in ATTENTION_BACKEND_CHOICES:
            raise ValueError(f"Invalid attention backend: {self.attention_backend}")

    def _handle_speculative_decoding(self) -> None:
        if self.speculative_algorithm is None:
            return
        if self.speculative_algorithm == "NEXTN":
            self.speculative_algorithm = "EAGLE"
        if self.max_running_requests is None:
            self.max_running_requests = 48
            logger.info(
                "Max running requests is reset to 48 for speculative decoding. You can override "
                "this by explicitly setting --max-running-requests."
            )
        if self.speculative_draft_model_path is None:
            self.speculative_draft_model_path = "lab/Kimi-K2.5-EAGLE3"
        if self.speculative_num_steps is None:
            self.speculative_num_steps = 3
        if self.speculative_eagle_topk is None:
            self.speculative_eagle_topk = 1
        if self.speculative_eagle_topk == 1:
            self.speculative_num_draft_tokens = self.speculative_num_steps + 1

    def _handle_cuda_graph(self) -> None:
        if self.cuda_graph_max_bs is None:
            self.cuda_graph_max_bs = 512 if self.tp_size >= 4 else 256
        if self.max_running_requests is not None:
            self.cuda_graph_max_bs = min(self.cuda_graph_max_bs, self.max_running_requests)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def prepare_server_args(argv: list[str]) -> ServerArgs:
    parser = argparse.ArgumentParser(prog="python -m sglang.launch_server")
    aliases = {"model_path": ["--model"], "tp_size": ["--tensor-parallel-size"],
               "speculative_draft_model_path": ["--speculative-draft-model"]}
    for field in dataclasses.fields(ServerArgs):
        flags = [_flag(field.name), *aliases.get(field.name, [])]
        if field.type == "bool":
            parser.add_argument(*flags, dest=field.name, action="store_true")
        elif field.name == "model_path":
            parser.add_argument(*flags, dest=field.name, required=True)
        else:
            kind = int if "int" in str(field.type) else float if "float" in str(field.type) else str
            choices = None
            if field.name.endswith("attention_backend") and field.name != "mm_attention_backend":
                choices = ATTENTION_BACKEND_CHOICES
            elif field.name == "speculative_algorithm":
                choices = SPECULATIVE_ALGORITHMS
            parser.add_argument(*flags, dest=field.name, type=kind, choices=choices,
                                default=field.default)
    return ServerArgs(**vars(parser.parse_args(argv)))
