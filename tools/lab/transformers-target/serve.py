"""Assisted generation (speculative decoding) over HTTP, with the transformers in ./src.

A target Llama built from a config with seeded random weights (nothing from a hub), and a draft
made of the target's embedding, first layer(s) and head (a layer-skip draft). The target's later
layers are scaled down, so they nudge its logits: the draft agrees with it on most tokens, as a
trained draft does. POST /generate {"prompt_len": P, "new_tokens": N, "seed": S} runs
target.generate with the draft as assistant model and answers the wall time per generated
token, and the speculative figures SGLang's meta_info gives: verify cycles (target forwards),
tokens per cycle (accept length) and the decode time per cycle. GET /health.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import torch
import transformers
from transformers import LlamaConfig, LlamaForCausalLM

SIZES = {  # target (hidden, layers, intermediate, heads), the draft's layers, vocabulary
    "cpu": ((256, 4, 688, 4), 1, 2048),
    "gpu": ((2048, 16, 5632, 16), 2, 32000),
}
LATER_LAYERS_SCALE = 0.02  # the draft agrees with the target on ~90 % of tokens (greedy)


def build(shape: tuple[int, int, int, int], vocab: int, device: str,
          dtype: torch.dtype) -> LlamaForCausalLM:
    hidden, layers, inter, heads = shape
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=inter,
                         num_hidden_layers=layers, num_attention_heads=heads,
                         num_key_value_heads=heads, max_position_embeddings=4096,
                         attn_implementation="sdpa")
    with torch.device(device):  # random init where it runs: seconds, not a minute, on a GPU
        return LlamaForCausalLM(config).to(dtype=dtype).eval()


def layer_skip_draft(target: LlamaForCausalLM, layers: int) -> LlamaForCausalLM:
    """The target's first `layers` layers with its embedding, norm and head."""
    with torch.no_grad():
        for layer in target.model.layers[layers:]:
            layer.self_attn.o_proj.weight.mul_(LATER_LAYERS_SCALE)
            layer.mlp.down_proj.weight.mul_(LATER_LAYERS_SCALE)
    config = copy.deepcopy(target.config)
    config.num_hidden_layers = layers
    with torch.device(target.device):
        draft = LlamaForCausalLM(config).to(dtype=target.dtype).eval()
    draft.load_state_dict(target.state_dict(), strict=False)  # the later layers stay out
    draft.generation_config.num_assistant_tokens = 4
    draft.generation_config.num_assistant_tokens_schedule = "constant"
    draft.generation_config.assistant_confidence_threshold = 0  # always 4 drafts a cycle
    return draft


class Generator:
    def __init__(self, size: str) -> None:
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        dtype = torch.bfloat16 if self.device == "cuda" else torch.float32
        if self.device == "cpu":
            torch.set_num_threads(1)  # steadier timings beside the benchmark on few cores
        target, draft_layers, self.vocab = SIZES[size]
        self.target = build(target, self.vocab, self.device, dtype)
        self.draft = layer_skip_draft(self.target, draft_layers)
        self.verify_ends: list[float] = []  # when each target forward (a verify cycle) ended
        self.target.register_forward_hook(lambda *_: self.verify_ends.append(self.now()))

    def now(self) -> float:
        if self.device == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter()

    def generate(self, prompt_len: int, new_tokens: int, seed: int) -> dict:
        ids = torch.randint(0, self.vocab, (1, prompt_len),
                            generator=torch.Generator().manual_seed(seed)).to(self.device)
        self.verify_ends.clear()
        start = self.now()
        with torch.no_grad():
            out = self.target.generate(ids, attention_mask=torch.ones_like(ids),
                                       assistant_model=self.draft, max_new_tokens=new_tokens,
                                       min_new_tokens=new_tokens, do_sample=False)
        end = self.now()
        made, cycles = out.shape[1] - prompt_len, len(self.verify_ends)
        result = {"ms": (end - start) * 1000, "tokens": made,
                  "ms_per_token": (end - start) * 1000 / made, "tok_s": made / (end - start),
                  "verify_ct": cycles, "accept_len": made / max(cycles, 1)}
        if cycles > 1:  # as SGLang: decode time (after the first forward) per verify cycle
            result["verify_ms"] = (end - self.verify_ends[0]) * 1000 / (cycles - 1)
        return result


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
