"""Attention backends by name. Modules are imported only when their backend is chosen."""

from __future__ import annotations

from collections.abc import Callable

ATTENTION_BACKENDS: dict[str, Callable] = {}


def register_attention_backend(name: str) -> Callable:
    def decorator(factory: Callable) -> Callable:
        ATTENTION_BACKENDS[name] = factory
        return factory

    return decorator


@register_attention_backend("triton")
def create_triton_backend(runner):
    from sglang.srt.layers.attention.triton_backend import TritonAttnBackend

    return TritonAttnBackend(runner)


@register_attention_backend("flashinfer")
def create_flashinfer_backend(runner):
    if runner.use_mla_backend:
        from sglang.srt.layers.attention.flashinfer_mla_backend import FlashInferMLAAttnBackend

        return FlashInferMLAAttnBackend(runner)
    from sglang.srt.layers.attention.flashinfer_backend import FlashInferAttnBackend

    return FlashInferAttnBackend(runner)


@register_attention_backend("fa3")
def create_flashattention_v3_backend(runner):
    from sglang.srt.layers.attention.flashattention_backend import FlashAttentionBackend

    return FlashAttentionBackend(runner)


@register_attention_backend("trtllm_mla")
def create_trtllm_mla_backend(runner):
    if not runner.use_mla_backend:
        raise ValueError("trtllm_mla backend can only be used with MLA models.")
    from sglang.srt.layers.attention.trtllm_mla_backend import TRTLLMMLABackend

    return TRTLLMMLABackend(runner)


@register_attention_backend("torch_native")
def create_torch_native_backend(runner):
    from sglang.srt.layers.attention.torch_native_backend import TorchNativeAttnBackend

    return TorchNativeAttnBackend(runner)


def create_attention_backend(name: str, runner):
    if name not in ATTENTION_BACKENDS:
        raise ValueError(f"Invalid attention backend: {name}")
    return ATTENTION_BACKENDS[name](runner)
