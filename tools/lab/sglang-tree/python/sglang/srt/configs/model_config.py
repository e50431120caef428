"""The models the lab can serve (it has no weights: a model is its shape)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelConfig:
    architecture: str
    num_layers: int
    hidden_size: int
    use_mla: bool
    context_len: int
    draft_acceptance: float = 0.0  # draft models only: chance that one draft token is accepted


KNOWN_MODELS = {
    "moonshotai/Kimi-K2.5": ModelConfig("DeepseekV3ForCausalLM", 61, 7168, True, 262144),
    "deepseek-ai/DeepSeek-V3": ModelConfig("DeepseekV3ForCausalLM", 61, 7168, True, 163840),
    "zai-org/GLM-4.6": ModelConfig("Glm4MoeForCausalLM", 92, 5120, False, 202752),
    "meta-llama/Llama-3.1-8B-Instruct": ModelConfig("LlamaForCausalLM", 32, 4096, False, 131072),
    "lab/Kimi-K2.5-EAGLE3": ModelConfig(
        "LlamaForCausalLMEagle3", 1, 7168, False, 262144, draft_acceptance=0.5
    ),
}


def get_model_config(model_path: str) -> ModelConfig:
    try:
        return KNOWN_MODELS[model_path]
    except KeyError:
        known = ", ".join(sorted(KNOWN_MODELS))
        raise ValueError(f"Unknown model {model_path!r} (the lab serves: {known})") from None
