"""`lab create tp DIR`: the seed's all-reduce regression on a real tensor-parallel server.

tp-target/ is a small Llama-like decoder split over 2 ranks with torch.distributed (gloo on
CPUs, NCCL on GPUs), serving speculative decoding over SGLang's /generate protocol. Left
uncommitted: the all-reduce split per token for short multi-token batches (only the verify
forward has those), NCCL tuning set in a sitecustomize and in the launcher (it reaches both
ranks and does not restore the gap), and a change to an attention backend that is not selected.
"""

from __future__ import annotations

from pathlib import Path

from tools.lab.changes import Change
from tools.lab.tree import build_repo, hunk_truth
from tools.lab.truth import Truth

TEMPLATE = Path(__file__).parent / "tp-target"

ALLREDUCE_PER_TOKEN = Change(
    file="tpserve/comm.py",
    role="culprit",
    kind="allreduce-split",
    old='''    """Sum `x` over the ranks, in place: one collective for the whole batch of tokens."""
    dist.all_reduce(x)
    return x
''',
    new='''    """Sum `x` over the ranks, in place: one collective for the whole batch of tokens."""
    if 1 < x.shape[0] <= 8:
        # short batches: one token at a time keeps each message in NCCL's low-latency window
        for row in x:
            dist.all_reduce(row)
        return x
    dist.all_reduce(x)
    return x
''',
    why="the verify forward (5 tokens) pays five all-reduce latencies per collective instead "
    "of one; prefill and one-token forwards are untouched",
)

SITECUSTOMIZE_NCCL = Change(
    file="sitecustomize.py",
    role="decoy",
    kind="env-propagated-no-effect",
    old="",
    new="""# NCCL tuning for this node: every Python process gets it at start-up (the ranks too).
import os

os.environ["NCCL_PROTO"] = "LL"
os.environ["NCCL_ALGO"] = "Ring"
""",
    why="NCCL_PROTO=LL / NCCL_ALGO=Ring reach both ranks and do not restore verify time",
)

LAUNCHER_NCCL = Change(
    file="tpserve/launch.py",
    role="decoy",
    kind="env-propagated-no-effect",
    old="""    os.environ["TP_MASTER_PORT"] = str(_free_port())
""",
    new="""    os.environ["TP_MASTER_PORT"] = str(_free_port())
    # make sure the ranks see the NCCL tuning even when the shell's env is lost
    os.environ.setdefault("NCCL_PROTO", "LL")
    os.environ.setdefault("NCCL_ALGO", "Ring")
""",
    why="the same NCCL variables, set again by the launcher before the ranks start",
)

FLASH_BACKEND = Change(
    file="tpserve/attention/flash.py",
    role="decoy",
    kind="unexecuted-backend",
    old="                          v.transpose(0, 1).unsqueeze(0), causal=True)\n",
    new="                          v.transpose(0, 1).unsqueeze(0), causal=True,\n"
    "                          softmax_scale=q.shape[-1] ** -0.5)\n",
    why="the flash backend; the server runs attention_backend='sdpa', so it is never imported",
)

CHANGES = [ALLREDUCE_PER_TOKEN, SITECUSTOMIZE_NCCL, LAUNCHER_NCCL, FLASH_BACKEND]

CONFIG = """\
# debug-agent target config: a 2-rank tensor-parallel server with speculative decoding
# Written by 'debug-agent lab create tp'; a real target uses the same keys.

[target]
repo = "."
good = "HEAD"

[launch]
# gloo on CPUs, NCCL when 2 GPUs are there; NVLink multicast stays off in every process
command = "{python} -m tpserve.launch --tp 2 --port {port}"
env = { PYTHONPATH = ".", NCCL_NVLS_ENABLE = "0", TORCH_SYMM_MEM_DISABLE_MULTICAST = "1", \
NVSHMEM_DISABLE_NVLS = "1" }
ready = "/health"
timeout_s = 300

[bench]
kind = "generate"
requests = 6
input_len = 16
output_len = 16
warmup = 1
# a launch's value is its fastest request: on a CPU shared with other work, interference only
# ever slows a request, and the culprit slows every verify, so the fastest one shows it cleanly
per_launch = "best"

[budget]
max_launches = 30

[symptom]
default = "verify 60ms"
"""


def build_tp_lab(dest: Path) -> tuple[Truth, Path, int]:
    repo = build_repo(
        dest,
        CHANGES,
        template=TEMPLATE,
        message="tpserve: tensor-parallel speculative decoding, known good",
    )
    culprits, decoys = hunk_truth(repo, CHANGES)
    config = dest / "debug-agent.toml"
    config.write_text(CONFIG)
    truth = Truth(scenario="tp", culprits=culprits, decoys=decoys, regression=True, expected={})
    return truth, config, len(CHANGES)
