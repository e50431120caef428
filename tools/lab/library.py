"""The changes that generated scenarios draw from, each with its ground truth.

Every change owns a `slot`, a region of one file: two changes of the same slot never appear in
one scenario, so each change stays its own hunk in `git diff HEAD`.
"""

from __future__ import annotations

from tools.lab.changes import Change, EnvChange, Role

SRT = "python/sglang/srt"
ATTN = f"{SRT}/layers/attention"


def _c(
    slot: str, file: str, old: str, new: str, role: Role, kind: str, why: str
) -> tuple[str, Change]:
    return slot, Change(file=file, old=old, new=new, role=role, kind=kind, why=why)


# ---- decoys: look suspicious or harmless, change nothing the benchmark can see ----

DECOYS = dict(
    [
        _c(
            "fi_mla",
            f"{ATTN}/flashinfer_mla_backend.py",
            "        return 0.009 + self._load_kv(batch)\n",
            "        # decode reads the KV twice: once for the scores, once for the output\n"
            "        return 0.009 + 2 * self._load_kv(batch)\n",
            "decoy",
            "unexecuted-backend",
            "flashinfer_mla_backend.py is never imported: the server runs "
            "attention_backend='triton'",
        ),
        _c(
            "fi",
            f"{ATTN}/flashinfer_backend.py",
            "        return 0.008 + batch.batch_size * batch.seq_len * 1.5e-6\n",
            "        # no tensor-core decode: plan once per layer instead of once per batch\n"
            "        return 0.08 + batch.batch_size * batch.seq_len * 1.5e-6\n",
            "decoy",
            "unexecuted-backend",
            "flashinfer_backend.py is for non-MLA models and is never imported here",
        ),
        _c(
            "fa3",
            f"{ATTN}/flashattention_backend.py",
            "        return 0.010 + batch.batch_size * batch.seq_len * 1.2e-6"
            " + batch.num_tokens * 2.0e-4\n",
            "        return 0.2 + batch.batch_size * batch.seq_len * 1.2e-6"
            " + batch.num_tokens * 2.0e-4\n",
            "decoy",
            "unexecuted-backend",
            "FlashAttention 3 is Hopper-only; on sm120 the server never imports it",
        ),
        _c(
            "trtllm",
            f"{ATTN}/trtllm_mla_backend.py",
            "        return 0.006 + batch.batch_size * batch.seq_len * 0.9e-6\n",
            "        # fp8 KV dequantised inside the kernel\n"
            "        return 0.06 + batch.batch_size * batch.seq_len * 0.9e-6\n",
            "decoy",
            "unexecuted-backend",
            "trtllm_mla is chosen on sm100 only; on sm120 it is never imported",
        ),
        _c(
            "glm_branch",
            f"{SRT}/server_args.py",
            '        elif arch == "Glm4MoeForCausalLM":\n            if is_sm100_supported():\n',
            '        elif arch == "Glm4MoeForCausalLM":\n'
            "            if is_sm100_supported() or is_sm120_supported():\n",
            "decoy",
            "other-architecture-branch",
            "the branch is for Glm4MoeForCausalLM; the served model is DeepseekV3ForCausalLM",
        ),
        _c(
            "glm_model",
            f"{SRT}/models/glm4_moe.py",
            "        moe = 0.03 + min(batch.num_tokens * 8, 160) * 0.004 * 8 / self.tp_size\n",
            "        moe = 0.03 + min(batch.num_tokens * 8, 160) * 0.016 * 8 / self.tp_size\n",
            "decoy",
            "other-architecture-branch",
            "glm4_moe.py is another architecture's model file, never imported for Kimi-K2.5",
        ),
        _c(
            "llama_model",
            f"{SRT}/models/llama.py",
            "        mlp = (0.05 + batch.num_tokens * 0.0004) * 8 / self.tp_size\n",
            "        mlp = (0.2 + batch.num_tokens * 0.0004) * 8 / self.tp_size  # unfused "
            "gate/up\n",
            "decoy",
            "other-architecture-branch",
            "llama.py is the dense Llama model; the EAGLE-3 draft head lives in llama_eagle3.py",
        ),
        _c(
            "triton",
            f"{ATTN}/triton_backend.py",
            "        # split-KV decode kernel, then the reduction over the splits\n",
            "        # decode: one split-KV kernel writes partial results, a second kernel "
            "reduces\n"
            "        # them (the split count trades occupancy against the reduction's cost)\n",
            "decoy",
            "comment-only",
            "only a comment changed",
        ),
        _c(
            "runner_log",
            f"{SRT}/model_executor/model_runner.py",
            '        logger.info("Load weight begin. avail mem=%.2f GB", labgpu.memory_gb() - '
            "1.2)\n",
            '        logger.info("Load weight begin. avail mem=%.2f GB, tp_size=%d",\n'
            "                    labgpu.memory_gb() - 1.2, tp_size)\n",
            "decoy",
            "log-message-only",
            "only a log message changed",
        ),
        _c(
            "http_env",
            f"{SRT}/entrypoints/http_server.py",
            "def serve(server_args, engine) -> None:\n",
            "def serve(server_args, engine) -> None:\n"
            "    # PCIe nodes: NCCL's Simple protocol for the large prefill all-reduces\n"
            '    os.environ["NCCL_PROTO"] = "Simple"\n',
            "decoy",
            "env-not-propagated",
            "NCCL_PROTO is set in the HTTP process after the schedulers were spawned: no worker "
            "sees it",
        ),
        _c(
            "engine_env",
            f"{SRT}/entrypoints/engine.py",
            '    os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "8"\n',
            '    os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "8"\n'
            '    os.environ.setdefault("NCCL_DEBUG", "WARN")  # quieter NCCL start-up\n',
            "decoy",
            "env-no-reader",
            "NCCL_DEBUG reaches the workers but only changes NCCL's logging",
        ),
        _c(
            "ar_wrapper",
            f"{SRT}/distributed/parallel_state.py",
            "    return get_tp_group().all_reduce(num_tokens, hidden_size)\n",
            "    group = get_tp_group()\n    return group.all_reduce(num_tokens, hidden_size)\n",
            "decoy",
            "perf-neutral-refactor",
            "a refactor with the same behaviour",
        ),
        _c(
            "eagle",
            f"{SRT}/speculative/eagle_worker.py",
            "        n = 0\n"
            "        while n < self.num_draft_tokens - 1 and self.rng.random() < self.acceptance:\n"
            "            n += 1\n        return n\n",
            "        n = 0\n        for _ in range(self.num_draft_tokens - 1):\n"
            "            if self.rng.random() >= self.acceptance:\n                break\n"
            "            n += 1\n        return n\n",
            "decoy",
            "perf-neutral-refactor",
            "the same acceptance loop, written as a for loop",
        ),
        _c(
            "cuda_graph_bs",
            f"{SRT}/server_args.py",
            "            self.cuda_graph_max_bs = 512 if self.tp_size >= 4 else 256\n",
            "            self.cuda_graph_max_bs = 256\n",
            "decoy",
            "perf-neutral-refactor",
            "a smaller largest CUDA-graph batch; the benchmark's batches are far below it",
        ),
        _c(
            "sched_overhead",
            f"{SRT}/managers/scheduler.py",
            "SCHEDULE_OVERHEAD_MS = 0.6  # CPU work of one scheduler iteration, between forwards\n",
            "SCHEDULE_OVERHEAD_MS = 0.5  # CPU work of one scheduler iteration (outputs batched)\n",
            "decoy",
            "small-improvement",
            "a small speed-up (0.1 ms per iteration)",
        ),
        _c(
            "moe",
            f"{SRT}/models/deepseek_v2.py",
            "        return 0.039 + expert_reads * 0.0045 * 8 / self.tp_size\n",
            "        return 0.036 + expert_reads * 0.0045 * 8 / self.tp_size  # fused router + "
            "topk\n",
            "decoy",
            "small-improvement",
            "a small speed-up of the MoE router",
        ),
    ]
)

ENV_DECOYS = [
    EnvChange(
        name="NCCL_DEBUG",
        value="INFO",
        role="decoy",
        kind="env-no-reader",
        why="NCCL_DEBUG only changes NCCL's logging",
    ),
    EnvChange(
        name="NCCL_ALGO",
        value="Ring",
        role="decoy",
        kind="env-default-value",
        why="Ring is what NCCL uses on this node anyway",
    ),
]

# ---- culprits: (slot, change) lists; each entry is one way the regression can happen ----

SINGLE_CULPRITS = dict(
    [
        _c(
            "ar_core",
            f"{SRT}/distributed/parallel_state.py",
            "        nbytes = num_tokens * hidden_size * BYTES_PER_ELEMENT\n",
            "        if 1 < num_tokens <= 8:\n"
            "            # keep every message inside NCCL's low-latency window on PCIe:\n"
            "            # reduce small multi-token batches one token at a time\n"
            "            return sum(self.all_reduce(1, hidden_size) for _ in range(num_tokens))\n"
            "        nbytes = num_tokens * hidden_size * BYTES_PER_ELEMENT\n",
            "culprit",
            "allreduce-split",
            "verify all-reduces go token by token: +10 ms per cycle, decode untouched",
        ),
        _c(
            "triton",
            f"{ATTN}/triton_backend.py",
            "        return 0.016 + read_kv + batch.num_tokens * 3.0e-4\n",
            "        # one KV split for extend: deterministic across batch sizes\n"
            "        return 0.176 + read_kv + batch.num_tokens * 3.0e-4\n",
            "culprit",
            "attention-extend-slowdown",
            "triton extend (which verify runs) is 0.16 ms slower per layer: +10 ms per cycle",
        ),
        _c(
            "eager",
            f"{SRT}/model_executor/model_runner.py",
            "EAGER_LAUNCH_MS_PER_LAYER = 0.02  # kernel launches when the forward runs eagerly\n",
            "EAGER_LAUNCH_MS_PER_LAYER = 0.18  # kernel launches when the forward runs eagerly\n",
            "culprit",
            "eager-launch-overhead",
            "every eager forward (verify among them) launches unfused kernels: +10 ms per cycle",
        ),
        _c(
            "eagle",
            f"{SRT}/speculative/eagle_worker.py",
            "        accepted = [1 + self._accepted_drafts() for _ in range(bs)]\n",
            "        accepted = [1 + self._accepted_drafts() for _ in range(bs)]\n"
            "        # refresh the target's hidden states for the accepted prefix\n"
            "        refresh = ForwardBatch(ForwardMode.EXTEND, bs, sum(accepted), seq_len)\n"
            "        self.target.forward(refresh)\n",
            "culprit",
            "extra-target-forward",
            "a second target forward per cycle: about +14 ms per cycle",
        ),
    ]
)

ARG_DEFAULT_CULPRIT = _c(
    "sm120_default",
    f"{SRT}/server_args.py",
    '                self.attention_backend = "triton"  # no fa3 / trtllm kernels for sm120 yet\n',
    '                self.attention_backend = "torch_native"  # triton MLA is unstable on sm120\n',
    "culprit",
    "server-arg-default",
    "the default attention backend on sm120 became torch_native: slower decode and verify",
)

PAIR_CULPRIT = [  # harmless alone, slow together
    _c(
        "pynccl",
        f"{SRT}/distributed/device_communicators/pynccl.py",
        '        """Milliseconds for one all-reduce of `nbytes` across the group."""\n',
        '        """Milliseconds for one all-reduce of `nbytes` across the group."""\n'
        '        chunk = int(os.environ.get("SGLANG_NCCL_CHUNK_BYTES", "0"))\n'
        "        if chunk and nbytes > chunk:  # bounded messages stay on the LL protocol\n"
        "            pieces = -(-nbytes // chunk)\n"
        "            return sum(self.all_reduce(min(chunk, nbytes - i * chunk))\n"
        "                       for i in range(pieces))\n",
        "culprit",
        "interacting-pair",
        "reads SGLANG_NCCL_CHUNK_BYTES and splits all-reduces; harmless while it is unset",
    ),
    _c(
        "engine_env",
        f"{SRT}/entrypoints/engine.py",
        '    os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "8"\n',
        '    os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "8"\n'
        '    os.environ.setdefault("SGLANG_NCCL_CHUNK_BYTES", "16384")\n',
        "culprit",
        "interacting-pair",
        "sets SGLANG_NCCL_CHUNK_BYTES for the workers; harmless until pynccl.py reads it",
    ),
]

ADDITIVE_CULPRITS = [  # each adds about half of the regression
    _c(
        "eager",
        f"{SRT}/model_executor/model_runner.py",
        "EAGER_LAUNCH_MS_PER_LAYER = 0.02  # kernel launches when the forward runs eagerly\n",
        "EAGER_LAUNCH_MS_PER_LAYER = 0.1  # kernel launches when the forward runs eagerly\n",
        "culprit",
        "additive",
        "eager forwards launch more kernels: about +5 ms per cycle",
    ),
    _c(
        "triton",
        f"{ATTN}/triton_backend.py",
        "        return 0.016 + read_kv + batch.num_tokens * 3.0e-4\n",
        "        return 0.096 + read_kv + batch.num_tokens * 3.0e-4\n",
        "culprit",
        "additive",
        "triton extend is 0.08 ms slower per layer: about +5 ms per cycle",
    ),
]

ENV_CULPRIT = EnvChange(
    name="NCCL_PROTO",
    value="Simple",
    role="culprit",
    kind="env-var",
    why="forcing NCCL's Simple protocol makes every small all-reduce slower (decode and verify)",
)

WORKER_ENV_CULPRIT = _c(  # the env var is the mechanism; the hunk that sets it is the culprit
    "sched_env",
    f"{SRT}/managers/scheduler.py",
    "    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle\n",
    "    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle\n"
    "    # PCIe nodes: NCCL's Simple protocol is steadier for the large prefill all-reduces\n"
    '    os.environ["NCCL_PROTO"] = "Simple"\n',
    "culprit",
    "worker-env",
    "each scheduler sets NCCL_PROTO=Simple for itself before its communicator reads it: every "
    "small all-reduce (decode and verify) gets slower",
)

ACCEPTANCE_CULPRIT = _c(  # fewer tokens per cycle; the cycle itself takes as long as before
    "draft_accept",
    f"{SRT}/speculative/eagle_worker.py",
    "        self.acceptance = self.draft.model_config.draft_acceptance\n",
    "        # the draft reads the target's last hidden layer only (one tensor instead of three)\n"
    "        self.acceptance = self.draft.model_config.draft_acceptance * 0.5\n",
    "culprit",
    "acceptance-drop",
    "the draft sees only the target's last layer: each draft token is accepted half as often "
    "(accept length 1.75 -> 1.31 per cycle), the verify cycle's time is unchanged",
)
