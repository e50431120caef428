"""Assisted generation (speculative decoding) over HTTP, with the transformers in ./src.

A target and a draft Llama built from configs with seeded random weights (nothing from a hub).
POST /generate {"prompt_len": P, "new_tokens": N, "seed": S} runs target.generate with the
draft as assistant model and answers the wall time per generated token. GET /health.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import torch
import transformers
from transformers import LlamaConfig, LlamaForCausalLM

SIZES = {  # (hidden, layers, intermediate, heads) of target and draft, vocabulary
    "cpu": ((256, 4, 688, 4), (128, 1, 344, 4), 2048),
    "gpu": ((2048, 16, 5632, 16), (512, 2, 1408, 8), 32000),
}


def build(shape: tuple[int, int, int, int], vocab: int, seed: int, device: str,
          dtype: torch.dtype) -> LlamaForCausalLM:
    hidden, layers, inter, heads = shape
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=inter,
                         num_hidden_layers=layers, num_attention_heads=heads,
                         num_key_value_heads=heads, max_position_embeddings=4096,
                         attn_implementation="sdpa")
    with torch.device(device):  # random init where it runs: seconds, not a minute, on a GPU
        return LlamaForCausalLM(config).to(dtype=dtype).eval()


class Generator:
    def __init__(self, size: str) -> None:
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        dtype = torch.bfloat16 if self.device == "cuda" else torch.float32
        if self.device == "cpu":
            torch.set_num_threads(1)  # steadier timings beside the benchmark on few cores
        target, draft, self.vocab = SIZES[size]
        self.target = build(target, self.vocab, 0, self.device, dtype)
        self.draft = build(draft, self.vocab, 1, self.device, dtype)
        self.draft.generation_config.num_assistant_tokens = 4
        self.draft.generation_config.num_assistant_tokens_schedule = "constant"

    def sync(self) -> None:
        if self.device == "cuda":
            torch.cuda.synchronize()

    def generate(self, prompt_len: int, new_tokens: int, seed: int) -> dict:
        ids = torch.randint(0, self.vocab, (1, prompt_len),
                            generator=torch.Generator().manual_seed(seed)).to(self.device)
        self.sync()
        start = time.perf_counter()
        with torch.no_grad():
            out = self.target.generate(ids, attention_mask=torch.ones_like(ids),
                                       assistant_model=self.draft, max_new_tokens=new_tokens,
                                       min_new_tokens=new_tokens, do_sample=False)
        self.sync()
        elapsed = time.perf_counter() - start
        made = out.shape[1] - prompt_len
        return {"ms": elapsed * 1000, "tokens": made, "ms_per_token": elapsed * 1000 / made}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--size", choices=sorted(SIZES), default=os.environ.get(
        "LAB_SIZE", "gpu" if torch.cuda.is_available() else "cpu"))
    args = parser.parse_args()
    print(f"transformers {transformers.__version__} from {transformers.__file__}", flush=True)
    generator = Generator(args.size)
    generator.generate(64, 8, 0)  # warm-up before we say we are ready
    print(f"ready on {generator.device}, size {args.size}", flush=True)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._reply(200 if self.path == "/health" else 404, {"ok": self.path == "/health"})

        def do_POST(self) -> None:
            if self.path != "/generate":
                self._reply(404, {"error": "unknown path"})
                return
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            self._reply(200, generator.generate(int(body.get("prompt_len", 192)),
                                                int(body.get("new_tokens", 32)),
                                                int(body.get("seed", 0))))

        def _reply(self, code: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    HTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    sys.exit(main())
