"""The HTTP API (SGLang's routes and reply shapes) and the tokenizer side of the main process."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import queue
import threading
import time
import uuid
from collections.abc import Iterator
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import sglang
from sglang.srt.configs.model_config import get_model_config

logger = logging.getLogger(__name__)

_WORDS = ("the", "of", "verify", "draft", "token", "cache", "rank", "graph", "batch", "kernel",
          "layer")


class TokenizerManager:
    def __init__(self, engine) -> None:
        self.engine = engine
        self.spec = engine.server_args.speculative_algorithm is not None
        self.pending: dict[str, queue.Queue] = {}
        self.lock = threading.Lock()
        self.internal_state: dict = {"last_gen_throughput": 0.0, "avg_spec_accept_length": None}
        self.profiled: queue.Queue = queue.Queue()  # the trace each stop_profile wrote
        threading.Thread(target=self._dispatch, daemon=True, name="detokenizer").start()

    def _dispatch(self) -> None:
        while True:
            msg = self.engine.out_queue.get()
            if msg[0] == "output":
                with self.lock:
                    target = self.pending.get(msg[1])
                if target is not None:
                    target.put(msg[2:])
            elif msg[0] == "stats":
                self.internal_state.update(msg[1])
            elif msg[0] == "profiled":
                self.profiled.put(msg[1])

    def generate(self, input_len: int, max_new_tokens: int, stream: bool) -> Iterator[tuple]:
        """Yield (new token ids, meta_info, finished) as the scheduler produces them."""
        rid = uuid.uuid4().hex
        replies: queue.Queue = queue.Queue()
        with self.lock:
            self.pending[rid] = replies
        self.engine.req_queue.put(("generate", rid, input_len, max_new_tokens, stream))
        produced = 0
        try:
            while True:
                n, meta, finished = replies.get()
                ids = [(produced + i) * 7 % 32000 for i in range(n)]
                produced += n
                yield ids, meta, finished
                if finished:
                    return
        finally:
            with self.lock:
                del self.pending[rid]


def detokenize(ids: list[int]) -> str:
    return "".join(" " + _WORDS[i % len(_WORDS)] for i in ids)


def tokenize_len(text: str) -> int:
    return max(1, (len(text) + 3) // 4)


class BadRequest(ValueError):
    pass


def _sampling_max_new_tokens(params: dict, key: str) -> int:
    value = params.get(key, 128)
    if not isinstance(value, int) or value < 1:
        raise BadRequest(f"{key} must be a positive integer, got {value!r}")
    return value


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # as uvicorn does: small replies must not wait for an ACK
    server_version = "uvicorn"
    sys_version = ""
    app: App  # set on the class by serve()

    def log_request(self, code="-", size="-") -> None:
        code = int(code) if str(code).isdigit() else 0
        phrase = HTTPStatus(code).phrase if code else ""
        logger.info('INFO:     %s:%d - "%s" %d %s', self.client_address[0],
                    self.client_address[1], self.requestline, code, phrase)

    def log_message(self, format, *args) -> None:  # noqa: A002 - the stdlib's name
        pass

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, obj) -> None:
        self._send(status, json.dumps(obj).encode())

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": {"message": message, "code": status}})

    def do_GET(self) -> None:
        route = self.path.split("?")[0]
        app = self.app
        if route in ("/health", "/health_generate", "/ready"):
            self._send(200 if app.ready.is_set() else 503, b"", "text/plain")
        elif not self._authorized():
            return
        elif route in ("/server_info", "/get_server_info"):
            self._json(200, app.server_info())
        elif route in ("/model_info", "/get_model_info"):
            self._json(200, app.model_info())
        elif route == "/v1/models":
            path = app.server_args.model_path
            self._json(200, {"object": "list", "data": [
                {"id": path, "object": "model", "owned_by": "sglang", "root": path}]})
        elif route == "/flush_cache":
            self._send(200, b"Cache flushed.\n", "text/plain")
        else:
            self._json(404, {"detail": "Not Found"})

    def _authorized(self) -> bool:
        """With --api-key, every route but the health checks wants `Authorization: Bearer`."""
        key = self.app.server_args.api_key
        if key and self.headers.get("Authorization") != f"Bearer {key}":
            self._json(401, {"error": "Unauthorized"})
            return False
        return True

    def do_POST(self) -> None:
        route = self.path.split("?")[0]
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self._authorized():
            return
        if route == "/flush_cache":
            self._send(200, b"Cache flushed.\n", "text/plain")
            return
        if route in ("/start_profile", "/stop_profile"):
            self._profile(route, raw)
            return
        if route not in ("/generate", "/v1/completions"):
            self._json(404, {"detail": "Not Found"})
            return
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise BadRequest("the request body must be a JSON object")
            if route == "/generate":
                self._generate(body)
            else:
                self._completions(body)
        except (BadRequest, json.JSONDecodeError) as e:
            self._error(400, str(e))

    def _profile(self, route: str, raw: bytes) -> None:
        """SGLang's torch profiler: traces go to output_dir (or $SGLANG_TORCH_PROFILER_DIR)."""
        manager = self.app.tokenizer
        if route == "/start_profile":
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = None
            body = body if isinstance(body, dict) else {}
            folder = body.get("output_dir") or os.environ.get("SGLANG_TORCH_PROFILER_DIR", "/tmp")
            profile_id = body.get("profile_id") or str(time.time())
            steps = body.get("num_steps") if isinstance(body.get("num_steps"), int) else 0
            manager.engine.req_queue.put(("start_profile", folder, profile_id, steps))
            self._send(200, b"Start profiling.\n", "text/plain")
            return
        manager.engine.req_queue.put(("stop_profile",))
        try:
            manager.profiled.get(timeout=60)
        except queue.Empty:
            self._error(500, "the profiler did not stop")
            return
        self._send(200, b"Stop profiling. This will take some time.\n", "text/plain")

    def _generate(self, body: dict) -> None:
        if "input_ids" in body:
            input_len = len(body["input_ids"])
        elif isinstance(body.get("text"), str):
            input_len = tokenize_len(body["text"])
        else:
            raise BadRequest("Either text or input_ids should be provided.")
        params = body.get("sampling_params") or {}
        max_new = _sampling_max_new_tokens(params, "max_new_tokens")
        stream = bool(body.get("stream"))
        outputs = self.app.tokenizer.generate(input_len, max_new, stream)
        if not stream:
            text, ids, meta = self._collect(outputs)
            self._json(200, {"text": text, "output_ids": ids, "meta_info": meta})
            return
        self._start_stream()
        text = ""
        for ids, meta, _ in outputs:  # text is cumulative, output_ids only the new ones
            text += detokenize(ids)
            self._chunk({"text": text, "output_ids": ids, "meta_info": meta})
        self._end_stream()

    def _completions(self, body: dict) -> None:
        prompt = body.get("prompt")
        if isinstance(prompt, list) and prompt and isinstance(prompt[0], int):
            input_len = len(prompt)
        elif isinstance(prompt, str):
            input_len = tokenize_len(prompt)
        else:
            raise BadRequest("prompt must be a string or a list of token ids")
        max_new = _sampling_max_new_tokens(body, "max_tokens")
        model = body.get("model") or self.app.server_args.model_path
        cid = "cmpl-" + uuid.uuid4().hex
        outputs = self.app.tokenizer.generate(input_len, max_new, bool(body.get("stream")))

        def reply(text: str, meta: dict, finish: str | None) -> dict:
            out = {"id": cid, "object": "text_completion", "created": int(time.time()),
                   "model": model, "choices": [{"index": 0, "text": text, "logprobs": None,
                                                "finish_reason": finish}],
                   "usage": {"prompt_tokens": input_len,
                             "completion_tokens": meta["completion_tokens"],
                             "total_tokens": input_len + meta["completion_tokens"]}}
            if body.get("return_spec_tokens_details") and "spec_verify_ct" in meta:
                out["sglext"] = {"spec_tokens_details": {
                    k: v for k, v in meta.items() if k.startswith("spec_")}}
            return out

        if not body.get("stream"):
            text, _, meta = self._collect(outputs)
            self._json(200, reply(text, meta, "length"))
            return
        self._start_stream()
        for ids, meta, finished in outputs:
            self._chunk(reply(detokenize(ids), meta, "length" if finished else None))
        self._end_stream()

    @staticmethod
    def _collect(outputs) -> tuple[str, list[int], dict]:
        all_ids: list[int] = []
        last_meta: dict = {}
        for ids, meta, _ in outputs:
            all_ids += ids
            last_meta = meta
        return detokenize(all_ids), all_ids, last_meta

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    def _chunk(self, obj: dict) -> None:
        self._write_chunk(b"data: " + json.dumps(obj).encode() + b"\n\n")

    def _end_stream(self) -> None:
        self._write_chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")


class App:
    def __init__(self, server_args, engine) -> None:
        self.server_args = server_args
        self.tokenizer = TokenizerManager(engine)
        self.ready = threading.Event()
        self.start_time = time.time()

    def server_info(self) -> dict:
        info = dataclasses.asdict(self.server_args)
        info.update(version=sglang.__version__, startup_time=self.start_time,
                    internal_states=[dict(self.tokenizer.internal_state)])
        return info

    def model_info(self) -> dict:
        config = get_model_config(self.server_args.model_path)
        return {"model_path": self.server_args.model_path,
                "tokenizer_path": self.server_args.tokenizer_path, "is_generation": True,
                "model_type": config.architecture.lower(), "architectures": [config.architecture]}

    def warmup(self) -> None:
        for _ in self.tokenizer.generate(8, 8, False):
            pass
        self.ready.set()
        logger.info("The server is fired up and ready to roll!")


def serve(server_args, engine) -> None:
    app = App(server_args, engine)
    Handler.app = app
    try:
        httpd = ThreadingHTTPServer((server_args.host, server_args.port), Handler)
    except OSError as e:
        raise OSError(f"[Errno {e.errno}] error while attempting to bind on address "
                      f"({server_args.host!r}, {server_args.port}): {e.strerror}") from None
    httpd.daemon_threads = True
    logger.info("INFO:     Started server process [%d]", os.getpid())
    logger.info("INFO:     Waiting for application startup.")
    logger.info("INFO:     Application startup complete.")
    logger.info("INFO:     Uvicorn running on http://%s:%d (Press CTRL+C to quit)",
                server_args.host, server_args.port)
    threading.Thread(target=app.warmup, daemon=True, name="warmup").start()
    try:
        httpd.serve_forever(poll_interval=0.1)
    finally:
        httpd.server_close()
