"""Which env vars and arguments a profile's movers speak for: a variable or a flag is tied to the
kernels and functions of the family it controls (NCCL's variables to the communication
kernels and the all-reduce code, an attention backend's flag to the attention kernels, the
thread counts to the CPU's own time), whether a candidate sets it directly (an env var, an
argument of the launch) or a hunk puts it into os.environ.

Such a tie says only that the knob could move that time, not that it did: it weighs half of a
hunk whose lines lie in the function that grew (agent/profile/ties.py), and never drops a
candidate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent.profile.ties import Tie
from agent.profile.time_moved import mover_line
from tools.profile.movers import Mover
from tools.repo.candidates import Candidate

WEIGHT = 0.5  # a family tie is indirect: half a direct one


@dataclass(frozen=True)
class Family:
    name: str
    movers: re.Pattern[str] | None  # the functions and kernels it holds (None: all CPU time)
    variables: re.Pattern[str]  # the env vars that control it
    flags: re.Pattern[str]  # the arguments (without dashes, `_` for `-`)


def _words(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


FAMILIES = (
    Family(
        "communication (NCCL)",
        _words(r"nccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|broadcast|custom_?ar"),
        _words(r"^(NCCL_|TORCH_NCCL_|NVSHMEM_)|ALL_?REDUCE|ALLGATHER"),
        _words(r"all_?reduce|nccl|allgather|tp_size|dp_size|pp_size"),
    ),
    Family(
        "attention",
        _words(r"attn|attention|flash|fmha|mla|flashinfer|decode_kernel|extend_kernel"),
        _words(r"ATTENTION|ATTN|FLASHINFER|FLASH_ATTN|_MLA"),
        _words(r"attention|attn|mla|kv_cache|page_size"),
    ),
    Family(
        "mixture of experts",
        _words(r"moe|expert|topk|deepep"),
        _words(r"MOE|EXPERT|DEEPEP"),
        _words(r"moe|expert|ep_size|deepep"),
    ),
    Family(
        "CUDA graphs",
        _words(r"cuda_?graph|graph_?replay"),
        _words(r"CUDA_GRAPH"),
        _words(r"cuda_graph"),
    ),
    Family(
        "matrix multiplies and quantization",
        _words(r"gemm|matmul|cublas|cutlass|fp8|int8|quant"),
        _words(r"CUBLAS|GEMM|FP8|QUANT|DEEP_GEMM"),
        _words(r"quantization|dtype|fp8"),
    ),
    Family(
        "CPU threads",
        None,
        _words(r"^(OMP|MKL|OPENBLAS|NUMEXPR|TORCH|VECLIB_MAXIMUM)_NUM_THREADS$"),
        _words(r"threads"),
    ),
)


def _knobs(c: Candidate) -> list[tuple[str, bool]]:
    """The env vars (True) and flags (False) a candidate sets."""
    if c.kind == "env" and c.name:
        return [(c.name, True)]
    if c.kind == "arg" and c.name:
        return [(c.name.lstrip("-").replace("-", "_"), False)]
    if c.kind == "hunk":
        return [(name, True) for name, _ in c.env_assignments()]
    return []


def _holds(family: Family, m: Mover) -> bool:
    if family.movers is None:
        return m.source == "sampled"
    return family.movers.search(m.function) is not None  # its file's path counts too


def control_priors(
    candidates: list[Candidate], moved: list[Mover], unit: str, higher_is_worse: bool = True
) -> dict[str, Tie]:
    """The prior factor of each candidate that sets a knob of a family some mover belongs to,
    by the largest share of the gap such a mover carries, with the reason quoted."""
    grown = [m for m in moved if m.delta > 0 and m.share]
    out: dict[str, Tie] = {}
    for c in candidates:
        best: tuple[float, str] | None = None
        for knob, is_variable in _knobs(c):
            for family in FAMILIES:
                pattern = family.variables if is_variable else family.flags
                if not pattern.search(knob):
                    continue
                for m in grown:
                    weight = (m.share or 0.0) * (1.0 if m.kind == "self" else 0.5) * WEIGHT
                    if _holds(family, m) and (best is None or weight > best[0]):
                        best = (
                            weight,
                            f"profile: {mover_line(m, unit, higher_is_worse)}; "
                            f"{knob} controls {family.name}",
                        )
        if best is not None:
            out[c.id] = Tie.to(*best)
    return out
