"""Architecture -> (module, class): models are imported by name, only the one served."""

import importlib

_TEXT_GENERATION_MODELS = {
    "LlamaForCausalLM": ("llama", "LlamaForCausalLM"),
    "MistralForCausalLM": ("llama", "LlamaForCausalLM"),
    "Qwen2ForCausalLM": ("qwen2", "Qwen2ForCausalLM"),
}


def resolve_model_cls(architecture: str):
    module, name = _TEXT_GENERATION_MODELS[architecture]
    return getattr(importlib.import_module(f"vllm.model_executor.models.{module}"), name)
