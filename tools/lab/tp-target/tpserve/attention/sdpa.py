"""Attention through torch's scaled_dot_product_attention, causal over cache + new tokens."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """q: [heads, new, d]; k, v: [heads, past + new, d]."""
    new, total = q.shape[1], k.shape[1]
    mask = torch.ones(new, total, dtype=torch.bool, device=q.device).tril(total - new)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
