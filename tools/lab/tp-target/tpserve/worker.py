"""One tensor-parallel rank: its shard of the model, and the decoding loop every rank runs.

Speculative decoding with n-gram drafts (the last token's earlier continuation proposes the next
tokens); each cycle verifies the proposals with one forward pass over all of them. All ranks see
the same logits after the all-reduces, so they accept the same tokens without talking.
"""

from __future__ import annotations

import os
import time

import torch
import torch.distributed as dist

from tpserve.attention import get_backend
from tpserve.model import Shard


def propose(seq: list[int], k: int) -> list[int]:
    """The k tokens that followed the last token's latest earlier occurrence (n-gram draft)."""
    last = seq[-1]
    for i in range(len(seq) - 2, -1, -1):
        if seq[i] == last:
            follow = seq[i + 1: i + 1 + k]
            return follow + [follow[-1]] * (k - len(follow))
    return [last] * k


def generate(model: Shard, prompt: list[int], max_new: int, k: int, device: torch.device,
             report=None) -> tuple[list[int], int]:
    model.reset()
    seq = list(prompt)
    logits = model.forward(torch.tensor(prompt, device=device))
    seq.append(int(logits[-1].argmax()))
    if report:
        report("first")
    cycles, cached = 0, len(prompt)
    while len(seq) - len(prompt) < max_new:
        draft = propose(seq, k)
        logits = model.forward(torch.tensor([seq[-1], *draft], device=device))
        choice = logits.argmax(dim=-1).tolist()
        accepted = 0
        while accepted < k and choice[accepted] == draft[accepted]:
            accepted += 1
        seq += draft[:accepted] + [choice[accepted]]
        cached += 1 + accepted
        model.truncate(cached)
        cycles += 1
    return seq[len(prompt):][:max_new], cycles


def run(rank: int, args: dict, inbox, outbox) -> None:
    backend = args["dist_backend"]
    if backend == "nccl":
        device = torch.device("cuda", rank)
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
        torch.set_num_threads(1)
        if hasattr(os, "sched_setaffinity"):  # one core per rank: steadier collectives
            os.sched_setaffinity(0, {rank % (os.cpu_count() or 1)})
    dist.init_process_group(backend, rank=rank, world_size=args["tp_size"],
                            init_method=f"tcp://127.0.0.1:{os.environ['TP_MASTER_PORT']}")
    model = Shard(args["hidden_size"], args["num_heads"], 4 * args["hidden_size"],
                  args["num_layers"], args["vocab_size"], rank, args["tp_size"],
                  get_backend(args["attention_backend"])).to_device(device)
    generate(model, list(range(16)), 8, args["spec_tokens"], device)  # warm-up
    if rank == 0:
        outbox.put(("ready", None))
    while True:
        request = inbox.get()
        if request is None:
            break
        prompt, max_new = request

        def report(event: str) -> None:
            if rank == 0:
                if device.type == "cuda":
                    torch.cuda.synchronize()
                outbox.put((event, time.perf_counter()))

        tokens, cycles = generate(model, prompt, max_new, args["spec_tokens"], device, report)
        if device.type == "cuda":
            torch.cuda.synchronize()
        if rank == 0:
            outbox.put(("done", (tokens, cycles, time.perf_counter())))
    dist.destroy_process_group()
