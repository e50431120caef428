"""The engine's configuration, printed as vLLM prints VllmConfig."""

from dataclasses import dataclass

# what the lab knows of each model: its architecture (config.json's) and its shape
MODELS = {
    "meta-llama/Llama-3.1-8B-Instruct": ("LlamaForCausalLM", 32, 4096, 131072),
    "Qwen/Qwen2.5-7B-Instruct": ("Qwen2ForCausalLM", 28, 3584, 32768),
}


@dataclass
class VllmConfig:
    model: str
    tensor_parallel_size: int
    max_num_seqs: int
    distributed_executor_backend: str

    @property
    def architecture(self) -> str:
        return MODELS[self.model][0]

    @property
    def max_seq_len(self) -> int:
        return MODELS[self.model][3]

    def __str__(self) -> str:
        return (
            f"model={self.model!r}, speculative_config=None, tokenizer={self.model!r}, "
            "skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, "
            "trust_remote_code=False, dtype=torch.bfloat16, "
            f"max_seq_len={self.max_seq_len}, download_dir=None, load_format=auto, "
            f"tensor_parallel_size={self.tensor_parallel_size}, pipeline_parallel_size=1, "
            "disable_custom_all_reduce=False, quantization=None, enforce_eager=False, "
            "kv_cache_dtype=auto, device_config=cuda, seed=None, "
            f"served_model_name={self.model}, num_scheduler_steps=1, "
            "enable_prefix_caching=True, chunked_prefill_enabled=True, "
            'compilation_config={"level":3,"use_cudagraph":true,"cudagraph_num_of_warmups":1}'
        )
