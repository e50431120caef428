"""A real local HTTP server that speaks OpenAI's chat-completions protocol from a script.

    python -m agent.llm.script_server SCRIPT.json --port N [--requests-log FILE]

SCRIPT is a JSON list, one entry per request, in order (the last entry repeats):
{"content": "text"}, {"tool_calls": [{"name": "...", "arguments": {...} or "raw text"}]},
{"http_status": 500}. Each request body is appended to the requests log (for tests that check
what a model was shown).
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _Script:
    def __init__(self, entries: list[dict], log: Path | None) -> None:
        self.entries = entries or [{"content": ""}]
        self.log = log
        self.served = 0
        self.lock = threading.Lock()

    def next(self, body: bytes) -> dict:
        with self.lock:
            entry = self.entries[min(self.served, len(self.entries) - 1)]
            self.served += 1
            if self.log:
                with open(self.log, "ab") as out:
                    out.write(body + b"\n")
        return entry


def _completion(entry: dict, model: str, n: int) -> dict:
    calls = [
        {
            "id": f"call_{n}_{i}",
            "type": "function",
            "function": {
                "name": c.get("name", ""),
                "arguments": c["arguments"]
                if isinstance(c.get("arguments"), str)
                else json.dumps(c.get("arguments", {})),
            },
        }
        for i, c in enumerate(entry.get("tool_calls", []))
    ]
    message: dict = {"role": "assistant", "content": entry.get("content")}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def make_server(script: _Script, port: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *args) -> None:  # quiet
            pass

        def _send(self, status: int, obj: dict) -> None:
            body = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._send(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if not self.path.endswith("/chat/completions"):
                self._send(404, {"error": {"message": "not found"}})
                return
            entry = script.next(body)
            if "http_status" in entry:
                self._send(int(entry["http_status"]), {"error": {"message": "scripted error"}})
                return
            try:
                model = json.loads(body).get("model", "scripted")
            except json.JSONDecodeError:
                model = "scripted"
            self._send(200, _completion(entry, model, script.served))

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("script", type=Path)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--requests-log", type=Path)
    args = parser.parse_args()
    server = make_server(_Script(json.loads(args.script.read_text()), args.requests_log), args.port)
    server.serve_forever()


if __name__ == "__main__":
    main()
