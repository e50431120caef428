"""A server's log, parsed by the reader of the server that wrote it: SGLang's or vLLM's.

The server is named by the caller (`--server`, the config's launch command) or told by the log's
own lines (tools.server_facts.server_of); a log neither tells is read as SGLang's, the reader
that knows transports and bench output best. Either way the result carries the server's facts
in one shape (tools.server_facts.ServerFacts).
"""

from __future__ import annotations

from pathlib import Path

from tools.code_paths.serving import DRAFT_KEY, TARGET_KEYS, loaded_architectures
from tools.log_file import open_log
from tools.server_facts import PEEK_CHARS, Server, ServerFacts, Speculative, server_of
from tools.sglang.log import LogParse, parse_log, parse_log_file
from tools.vllm.log import parse_vllm_log, parse_vllm_log_file


def args_line(text: str) -> int | None:
    """The line of SGLang's `server_args=` dump."""
    return next((n for n, row in enumerate(text.splitlines(), 1) if "server_args=" in row), None)


def sglang_facts(parse: LogParse, text: str) -> ServerFacts:
    """SGLang's facts in the shared shape: its server_args dump and `Load weight end` lines."""
    args = parse.server_args or {}
    algorithm = args.get("speculative_algorithm")
    backends = [str(args[k]) for k in (*TARGET_KEYS, DRAFT_KEY) if args.get(k)]
    version = args.get("version")
    return ServerFacts(
        server="sglang",
        version=version if isinstance(version, str) else None,
        args=parse.server_args,
        args_line=args_line(text),
        architectures=loaded_architectures(text),
        attention=list(dict.fromkeys(backends)),
        speculative=Speculative.of(
            algorithm,
            args.get("speculative_draft_model_path"),
            args.get("speculative_num_draft_tokens"),
        )
        if isinstance(algorithm, str) and algorithm.upper() != "NONE"
        else None,
    )


def parse_server_log(text: str, server: Server | None = None) -> LogParse:
    """The log's parse by its server's reader; never raises."""
    told = server or server_of(text)
    if told == "vllm":
        return parse_vllm_log(text)
    parse = parse_log(text)
    parse.server = _shown(sglang_facts(parse, text), told)
    return parse


def parse_server_log_file(path: Path, server: Server | None = None) -> LogParse:
    """As parse_server_log, reading the file line by line (its start tells the server)."""
    with open_log(path) as stream:
        head = stream.read(PEEK_CHARS)
    told = server or server_of(head)
    if told == "vllm":
        return parse_vllm_log_file(path)
    parse = parse_log_file(path)
    parse.server = _shown(sglang_facts(parse, _startup_text(path)), told)
    return parse


def _shown(facts: ServerFacts, told: Server | None) -> ServerFacts | None:
    """SGLang's facts where the log is SGLang's (told, or its lines say so), else None: a
    command bench's output or a log of no known server names no server."""
    if told == "sglang" or facts.args or facts.args_line or facts.architectures:
        return facts
    return None


def _startup_text(path: Path) -> str:
    """The lines SGLang's facts read (the dump, `Load weight end`), not the whole file."""
    kept = []
    with open_log(path) as stream:
        for row in stream:
            kept.append(row if ("server_args=" in row or "Load weight end" in row) else "\n")
    return "".join(kept)
