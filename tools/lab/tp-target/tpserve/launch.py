"""`python -m tpserve.launch --tp 2 --port P`: the HTTP front and one process per rank.

POST /generate speaks SGLang's protocol (text, sampling_params.max_new_tokens, stream) and
reports meta_info with e2e_latency, completion_tokens and spec_verify_ct (verify cycles).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import socket
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_args() -> dict:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tp", type=int, default=2)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--attention-backend", default="sdpa")
    parser.add_argument("--dist-backend", default="auto", choices=["auto", "gloo", "nccl"])
    parser.add_argument("--hidden-size", type=int, default=512)
    parser.add_argument("--num-heads", type=int, default=8)
    parser.add_argument("--num-layers", type=int, default=4)
    parser.add_argument("--vocab-size", type=int, default=512)
    parser.add_argument("--spec-tokens", type=int, default=4)
    a = parser.parse_args()
    backend = a.dist_backend
    if backend == "auto":
        import torch

        backend = "nccl" if torch.cuda.device_count() >= a.tp else "gloo"
    return {"tp_size": a.tp, "port": a.port, "attention_backend": a.attention_backend,
            "dist_backend": backend, "hidden_size": a.hidden_size, "num_heads": a.num_heads,
            "num_layers": a.num_layers, "vocab_size": a.vocab_size,
            "spec_tokens": a.spec_tokens}


def main() -> None:
    args = parse_args()
    shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
    print(f"[{time.strftime('%Y-%m-%d %H:%M:%S')}] server_args=ServerArgs({shown})", flush=True)
    os.environ["TP_MASTER_PORT"] = str(_free_port())
    from tpserve import worker

    ctx = mp.get_context("spawn")
    inboxes = [ctx.Queue() for _ in range(args["tp_size"])]
    outbox = ctx.Queue()
    ranks = [ctx.Process(target=worker.run, args=(r, args, inboxes[r], outbox), daemon=True)
             for r in range(args["tp_size"])]
    for p in ranks:
        p.start()
    if outbox.get(timeout=600)[0] != "ready":
        sys.exit("the ranks did not start")
    vocab = args["vocab_size"]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            if self.path in ("/health", "/model_info"):
                self._send(200, "application/json", json.dumps(
                    {"model_path": "tp-lab", "tp_size": args["tp_size"]}).encode())
            else:
                self._send(404, "application/json", b"{}")

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            text = body.get("text", "")
            prompt = [b % vocab for b in text.encode()] or [0]
            max_new = int(body.get("sampling_params", {}).get("max_new_tokens", 32))
            start = time.perf_counter()
            for inbox in inboxes:
                inbox.put((prompt, max_new))
            event, first = outbox.get()
            event, (tokens, cycles, end) = outbox.get()
            meta = {"prompt_tokens": len(prompt), "completion_tokens": len(tokens),
                    "e2e_latency": end - start, "spec_verify_ct": cycles,
                    "spec_accept_length": len(tokens) / max(cycles, 1)}
            first_meta = {**meta, "completion_tokens": 1, "e2e_latency": first - start}
            if body.get("stream"):
                chunks = [{"text": "", "meta_info": first_meta},
                          {"text": " ".join(map(str, tokens)), "meta_info": meta}]
                data = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
                self._send(200, "text/event-stream", data + b"data: [DONE]\n\n")
            else:
                self._send(200, "application/json", json.dumps(
                    {"text": " ".join(map(str, tokens)), "meta_info": meta}).encode())

        def _send(self, code: int, kind: str, data: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    print(f"The server is fired up and ready to roll! (tp={args['tp_size']}, "
          f"{args['dist_backend']})", flush=True)
    HTTPServer(("127.0.0.1", args["port"]), Handler).serve_forever()


if __name__ == "__main__":
    main()
