"""A Llama-like decoder split over the tensor-parallel ranks (Megatron style).

Attention heads and MLP columns are split; the attention output projection and the MLP down
projection are row-parallel, each followed by one all-reduce. The embedding and the head are
replicated, so every rank computes the same logits and takes the same decisions.
"""

from __future__ import annotations

import torch
from torch import nn

from tpserve.comm import all_reduce


class Shard(nn.Module):
    def __init__(self, hidden: int, heads: int, inter: int, layers: int, vocab: int,
                 rank: int, world: int, attention) -> None:
        super().__init__()
        gen = torch.Generator().manual_seed(0)  # same full weights on every rank

        def full(*shape: int) -> torch.Tensor:
            return torch.randn(*shape, generator=gen) / shape[-1] ** 0.5

        self.heads, self.dim = heads // world, hidden // heads
        self.attention = attention
        self.embed = full(vocab, hidden) * hidden ** 0.5
        self.head = full(vocab, hidden)
        h0, h1 = rank * self.heads * self.dim, (rank + 1) * self.heads * self.dim
        i0, i1 = rank * inter // world, (rank + 1) * inter // world
        self.layers = []
        for _ in range(layers):
            qkv, out, up, down = full(3 * hidden, hidden), full(hidden, hidden), full(
                inter, hidden), full(hidden, inter)
            self.layers.append({
                "qkv": torch.cat([qkv[j * hidden + h0: j * hidden + h1] for j in range(3)]),
                "out": out[:, h0:h1].contiguous(), "up": up[i0:i1].contiguous(),
                "down": down[:, i0:i1].contiguous()})
        self.cache: list[tuple[torch.Tensor, torch.Tensor]] = []

    def to_device(self, device: torch.device) -> Shard:
        self.embed, self.head = self.embed.to(device), self.head.to(device)
        self.layers = [{k: w.to(device) for k, w in layer.items()} for layer in self.layers]
        return self

    def reset(self) -> None:
        self.cache = []

    def truncate(self, length: int) -> None:
        self.cache = [(k[:, :length], v[:, :length]) for k, v in self.cache]

    @torch.no_grad()
    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits for `tokens` appended after the cached ones: [len(tokens), vocab]."""
        x = self.embed[tokens]
        for i, layer in enumerate(self.layers):
            h = nn.functional.rms_norm(x, (x.shape[-1],))
            q, k, v = (h @ layer["qkv"].T).split(self.heads * self.dim, dim=-1)
            q, k, v = (t.view(-1, self.heads, self.dim).transpose(0, 1) for t in (q, k, v))
            if i < len(self.cache):
                k = torch.cat([self.cache[i][0], k], dim=1)
                v = torch.cat([self.cache[i][1], v], dim=1)
                self.cache[i] = (k, v)
            else:
                self.cache.append((k, v))
            a = self.attention(q, k, v).transpose(0, 1).reshape(len(tokens), -1)
            x = x + all_reduce(a @ layer["out"].T)
            h = nn.functional.rms_norm(x, (x.shape[-1],))
            x = x + all_reduce(nn.functional.silu(h @ layer["up"].T) @ layer["down"].T)
        return nn.functional.rms_norm(x, (x.shape[-1],)) @ self.head.T
