"""A flash-attention backend for GPUs that have the kernels (not selected by default)."""

from __future__ import annotations

import torch


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    from flash_attn import flash_attn_func  # only where it is installed

    out = flash_attn_func(q.transpose(0, 1).unsqueeze(0), k.transpose(0, 1).unsqueeze(0),
                          v.transpose(0, 1).unsqueeze(0), causal=True)
    return out.squeeze(0).transpose(0, 1)
