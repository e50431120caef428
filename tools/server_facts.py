"""What a server's log says about the server, in one shape for SGLang and vLLM.

The engine reads this, whichever server wrote the log: which server (told by the log's own
lines, or named by the user), its version, the arguments it logged and their line, the model
architectures (the target's first, then a draft's), the attention backends (the target's
first), and the speculative decoding it runs. What only one server tells is in `details`.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel

Server = Literal["sglang", "vllm"]
SERVERS: tuple[Server, ...] = ("sglang", "vllm")

# lines only one of the two prints (each server's facts file names the source)
_VLLM = re.compile(
    r"vLLM API server version|vLLM server version|LLM engine \(v\d|\bnon-default args: \{"
    r"|\bargs: Namespace\(|\((?:VllmWorker rank=\d+|APIServer|EngineCore(?:_DP)?\d*|Worker_\w+)"
    r" pid=\d+|Resolved architecture: |\bvllm\.entrypoints|\[vllm\]|vllm serve "
    r"|Engine \d{3}: Avg prompt throughput|SpecDecoding metrics: "
)
_SGLANG = re.compile(
    r"\bserver_args=|Load weight end\.|\b(?:Decode|Prefill) batch\b|sglang\.launch_server"
    r"|\bsglang serve\b|The server is fired up and ready to roll"
)
PEEK_CHARS = 1 << 18  # what `server_of` reads of a log: its start holds the startup lines


class Speculative(BaseModel):
    method: str | None = None  # EAGLE3, eagle3, mtp, ngram...
    draft_model: str | None = None
    num_tokens: int | None = None

    @classmethod
    def of(cls, method: object, draft_model: object, num_tokens: object) -> Speculative:
        """From values a log printed, whatever their type: what is not a name or a count
        is unknown."""
        return cls(
            method=method if isinstance(method, str) else None,
            draft_model=draft_model if isinstance(draft_model, str) else None,
            num_tokens=num_tokens
            if isinstance(num_tokens, int) and not isinstance(num_tokens, bool)
            else None,
        )


class ServerFacts(BaseModel):
    server: Server | None = None
    version: str | None = None
    args: dict[str, Any] | None = None
    args_line: int | None = None
    architectures: list[str] = []
    attention: list[str] = []
    speculative: Speculative | None = None
    details: dict[str, Any] = {}


def server_of(text: str) -> Server | None:
    """The server that wrote a log, by the lines only it prints; None when neither's show (or
    both's equally: a log of two servers)."""
    head = text[:PEEK_CHARS]
    vllm = len(_VLLM.findall(head))
    sglang = len(_SGLANG.findall(head))
    if vllm == sglang:
        return None
    return "vllm" if vllm > sglang else "sglang"


def server_of_command(argv: list[str]) -> Server | None:
    """The server a launch command starts: `vllm serve`, `python -m vllm.entrypoints...`,
    `python -m sglang.launch_server`, `sglang serve`."""
    words = [w.rsplit("/", 1)[-1] for w in argv]
    for n, word in enumerate(words):
        if word in ("vllm", "sglang") and n + 1 < len(words) and words[n + 1] == "serve":
            return word  # type: ignore[return-value]
        if word.startswith("vllm.entrypoints") or word == "vllm.entrypoints.openai.api_server":
            return "vllm"
        if word.startswith("sglang.launch_server") or word.startswith("sglang.srt"):
            return "sglang"
    return None
