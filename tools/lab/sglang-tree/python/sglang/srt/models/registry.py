"""Model classes by architecture name; a model's module is imported only when it is served."""

from __future__ import annotations

import importlib

_MODULES = {
    "DeepseekV2ForCausalLM": "deepseek_v2",
    "DeepseekV3ForCausalLM": "deepseek_v2",
    "Glm4MoeForCausalLM": "glm4_moe",
    "LlamaForCausalLM": "llama",
    "LlamaForCausalLMEagle3": "llama_eagle3",
}


def get_model_class(architecture: str) -> type:
    if architecture not in _MODULES:
        raise ValueError(f"Model architecture {architecture} is not supported")
    module = importlib.import_module(f"sglang.srt.models.{_MODULES[architecture]}")
    return getattr(module, architecture)
