"""`lab create vllm DIR`: a vLLM-shaped lab (vllm-tree/: vLLM's paths, log lines and OpenAI
API, on the lab's simulated GPU), served as vLLM 0.8.5 with a Ray executor on 2 ranks.

Left uncommitted: FlashAttention's decode splitting the KV sequence four times less (the
culprit: every decode step reads the cache in fewer, longer passes), a change to FlashInfer (the
server selects FlashAttention: never imported), a change to Qwen2 (the server runs Llama: never
imported), and NCCL tuning set in the API server's process, which never reaches the Ray worker
(vLLM 0.8 copies only the VLLM_* variables it knows to Ray workers).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tools.lab.changes import Change
from tools.lab.tree import TEMPLATE as SGLANG_TEMPLATE
from tools.lab.tree import build_repo, hunk_truth
from tools.lab.truth import Truth

TEMPLATE = Path(__file__).parent / "vllm-tree"
GPU_FILES = ("labgpu.py", "labgpu_profiler.py")  # the simulated GPU, shared with the SGLang lab

FEWER_DECODE_SPLITS = Change(
    file="vllm/v1/attention/backends/flash_attn.py",
    role="culprit",
    kind="decode-split-kv",
    old="""        return max(1, min(16, seq_len // 256))
""",
    new="""        # fewer, longer splits: less work merging the partial results
        return max(1, min(16, seq_len // 1024))
""",
    why="decode attention over a 1k-token context runs in one pass instead of four: each "
    "decode step's attention takes ~3x longer, +34 % TPOT",
)

FLASHINFER_DECODE = Change(
    file="vllm/v1/attention/backends/flashinfer.py",
    role="decoy",
    kind="unexecuted-backend",
    old="""        return 0.006 + 0.00001 * num_tokens * seq_len
""",
    new="""        return 0.006 + 0.000014 * num_tokens * seq_len
""",
    why="FlashInfer is not selected: the server logs 'Using Flash Attention backend on V1 "
    "engine.' and never imports flashinfer.py",
)

QWEN2_MLP = Change(
    file="vllm/model_executor/models/qwen2.py",
    role="decoy",
    kind="other-architecture",
    old="""    mlp_ratio = 5.3
""",
    new="""    mlp_ratio = 5.6
""",
    why="the server runs LlamaForCausalLM; the registry imports qwen2.py only for Qwen2",
)

NCCL_IN_THE_DRIVER = Change(
    file="vllm/entrypoints/openai/api_server.py",
    role="decoy",
    kind="env-never-arrives",
    old="""logger = init_logger("vllm.entrypoints.openai.api_server")
""",
    new="""logger = init_logger("vllm.entrypoints.openai.api_server")
# NCCL tuning for small all-reduce messages, set before the engine starts its workers
os.environ.setdefault("NCCL_PROTO", "LL")
os.environ.setdefault("NCCL_ALGO", "Ring")
""",
    why="the API server sets NCCL_PROTO/NCCL_ALGO in its own process; the Ray worker gets the "
    "cluster's environment and the VLLM_* variables vLLM copies, so they never arrive",
)

CHANGES = [FEWER_DECODE_SPLITS, FLASHINFER_DECODE, QWEN2_MLP, NCCL_IN_THE_DRIVER]

CONFIG = """\
# debug-agent target config: the vLLM lab (vLLM 0.8.5 layout, Ray executor, 2 ranks)
# Written by 'debug-agent lab create vllm'; a real target uses the same keys.

[target]
repo = "."
good = "HEAD"

[launch]
# vLLM's OpenAI API server; {port} is picked free for each launch, {python} is this Python.
# The simulated GPU runs in real time (SGLANG_LAB_TIME_SCALE = 1): the OpenAI bench times
# requests at the client, as it does for any server.
command = "{python} -m vllm.entrypoints.openai.api_server --model \
meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 2 --distributed-executor-backend ray \
--port {port}"
env = { PYTHONPATH = ".", SGLANG_LAB_GPU = "sm90", SGLANG_LAB_TIME_SCALE = "1", \
SGLANG_LAB_STEP_CV = "0.02", SGLANG_LAB_LAUNCH_CV = "0.01" }
ready = "/health"
timeout_s = 60

[bench]
kind = "openai"   # streamed /v1/completions, timed at the client
requests = 6
concurrency = 1
input_len = 1024
output_len = 32
warmup = 1

[budget]
max_launches = 30

[symptom]
default = "TPOT 3.9ms (was 2.9)"
"""


def build_vllm_lab(dest: Path) -> tuple[Truth, Path, int]:
    for name in GPU_FILES:  # copied before the good commit: part of the lab's machine
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SGLANG_TEMPLATE / "python" / name, dest / name)
    repo = build_repo(
        dest, CHANGES, template=TEMPLATE, message="vllm 0.8.5 (lab): known-good state"
    )
    culprits, decoys = hunk_truth(repo, CHANGES)
    config = dest / "debug-agent.toml"
    config.write_text(CONFIG)
    truth = Truth(
        scenario="vllm",
        culprits=culprits,
        decoys=decoys,
        regression=True,
        expected={"good_tpot_ms": 2.9, "bad_tpot_ms": 3.9},
    )
    return truth, config, len(CHANGES)
