"""`python -m vllm.entrypoints.openai.api_server`: vLLM's OpenAI-compatible server (lab)."""

import argparse
import json
import os
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from vllm import __version__
from vllm.config import MODELS, VllmConfig
from vllm.logger import configure, init_logger
from vllm.v1.engine.core import EngineCore

logger = init_logger("vllm.entrypoints.openai.api_server")


def make_arg_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="vLLM OpenAI-Compatible RESTful API server.")
    parser.add_argument("--host", default=os.environ.get("VLLM_HOST_IP"))
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--model", default="meta-llama/Llama-3.1-8B-Instruct", choices=MODELS)
    parser.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
    parser.add_argument("--distributed-executor-backend", default="ray", choices=["ray"])
    parser.add_argument("--max-num-seqs", type=int, default=256)
    parser.add_argument("--api-key", default=None)
    return parser


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    engine: EngineCore
    model: str

    def log_message(self, *args) -> None:  # no access log
        pass

    def _json(self, status: int, obj: dict) -> None:
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/health":
            self._json(200, {})
        elif self.path == "/v1/models":
            self._json(200, {"object": "list", "data": [{"id": self.model, "object": "model"}]})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        if self.path != "/v1/completions":
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            prompt_tokens = max(1, len(str(body["prompt"])) // 4)
            max_tokens = int(body.get("max_tokens", 16))
        except (ValueError, KeyError, TypeError) as e:
            self._json(400, {"error": {"message": f"bad request: {e}"}})
            return
        request = self.engine.add_request(prompt_tokens, max_tokens)
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": max_tokens,
                 "total_tokens": prompt_tokens + max_tokens}
        if not body.get("stream"):
            while request.out.get() is not None:
                pass
            self._json(200, {"object": "text_completion", "model": self.model, "usage": usage,
                             "choices": [{"index": 0, "text": " token" * max_tokens,
                                          "finish_reason": "length"}]})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        while request.out.get() is not None:
            self._event({"object": "text_completion", "model": self.model,
                         "choices": [{"index": 0, "text": " token", "finish_reason": None}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            self._event({"object": "text_completion", "choices": [], "usage": usage})
        self._write(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")

    def _event(self, obj: dict) -> None:
        self._write(b"data: " + json.dumps(obj).encode() + b"\n\n")

    def _write(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def main() -> None:
    args = make_arg_parser().parse_args()
    configure()
    logger.info("vLLM API server version %s", __version__)
    logger.info("args: %s", args)
    config = VllmConfig(args.model, args.tensor_parallel_size, args.max_num_seqs,
                        args.distributed_executor_backend)
    engine = EngineCore(config)
    Handler.engine, Handler.model = engine, args.model
    httpd = ThreadingHTTPServer((args.host or "127.0.0.1", args.port), Handler)
    httpd.daemon_threads = True

    def stop(*_) -> None:
        engine.executor.shutdown()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    logger.info("Starting vLLM API server on http://%s:%d", args.host or "127.0.0.1", args.port)
    try:
        httpd.serve_forever(poll_interval=0.1)
    finally:
        engine.executor.shutdown()


if __name__ == "__main__":
    main()
