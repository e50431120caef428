"""The CUDA platform: which attention backend a model gets (vLLM 0.8's selection)."""

import labgpu

from vllm.logger import init_logger

logger = init_logger(__name__)


class CudaPlatform:
    device_name = "cuda"

    @classmethod
    def get_device_capability(cls) -> tuple[int, int]:
        sm = labgpu.device_sm()
        return sm // 10, sm % 10

    @classmethod
    def get_attn_backend_cls(cls, selected_backend, use_v1: bool, use_mla: bool) -> str:
        if use_v1:
            if selected_backend == "FLASHINFER":
                logger.info("Using FlashInfer backend on V1 engine.")
                return "vllm.v1.attention.backends.flashinfer.FlashInferBackend"
            if selected_backend == "TRITON_ATTN_VLLM_V1":
                logger.info("Using Triton backend on V1 engine.")
                return "vllm.v1.attention.backends.triton_attn.TritonAttentionBackend"
            logger.info("Using Flash Attention backend on V1 engine.")
            return "vllm.v1.attention.backends.flash_attn.FlashAttentionBackend"
        raise NotImplementedError("the lab has no V0 engine")


current_platform = CudaPlatform()
