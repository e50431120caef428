"""Load generator against SGLang's /generate and /v1/completions: samples and derived metrics.

Times come from the server's own meta_info (`e2e_latency`, and the first streamed chunk for the
time to first token) when it reports them, else from the client's clock; each metric says which.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from functools import partial

import httpx
from pydantic import BaseModel, Field, ValidationError

from tools.daemon_pool import DaemonPool
from tools.errors import ToolError, first_problem
from tools.json_text import parse_json
from tools.server_http import get_json, server_client


class BenchError(ToolError):
    pass


class RequestSample(BaseModel):
    latency_s: float
    ttft_s: float | None
    prompt_tokens: int | None = Field(ge=0)
    completion_tokens: int = Field(gt=0)
    time_source: str  # "server" (meta_info) or "client"
    meta_info: dict


class Metric(BaseModel):
    name: str
    unit: str
    median: float
    mean: float
    samples: list[float]
    source: str


class BenchResult(BaseModel):
    samples: list[RequestSample]
    metrics: dict[str, Metric]


LARGEST = 1e100  # beyond it (or below its inverse) sums and ratios of values overflow


def is_measurement(value: object) -> bool:
    """A time or a rate: a finite number above zero (NaN, inf, 0 and negatives are not),
    within a factor of 1e100 of 1 (1e308 made the mean an OverflowError)."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and 1 / LARGEST < value < LARGEST
    )


def _object(chunk: dict, key: str, url: str) -> dict:
    """The chunk's `key` object ({} where absent or null)."""
    value = chunk.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BenchError(f"POST {url} streamed {key} = {str(value)[:80]!r}, not a JSON object")
    return value


def _sample(url: str, **fields: object) -> RequestSample:
    """A request's sample; a reply whose counts are not counts is one line naming the field."""
    try:
        return RequestSample.model_validate(fields)
    except ValidationError as e:
        raise BenchError(f"POST {url} replied {first_problem(e)}") from None


def _prompt(input_len: int, i: int) -> str:
    # about four characters per token, and a different prompt per request
    return (f"request {i}: " + "tell me about speculative decoding " * input_len)[: input_len * 4]


LINE_LIMIT = 16 << 20  # characters of one streamed line: a chunk holds the text so far
_NEWLINE = re.compile(r"\r\n|\r|\n")


def _lines(response: httpx.Response, url: str) -> Iterator[str]:
    """The stream's lines; one longer than LINE_LIMIT is an error (httpx's own line reader
    keeps a line without end whole, in memory, until the bench's deadline)."""
    parts: list[str] = []  # the pieces of the line not yet ended
    size = 0
    for text in response.iter_text():
        *ended, rest = _NEWLINE.split(text)
        if ended:
            yield "".join([*parts, ended[0]])
            yield from ended[1:]
            parts, size = [], 0
        parts.append(rest)
        size += len(rest)
        if size > LINE_LIMIT:
            raise BenchError(f"POST {url} streamed a line of over {LINE_LIMIT:,} characters")
    if parts and "".join(parts):
        yield "".join(parts)


def _stream_chunks(client: httpx.Client, url: str, body: dict) -> Iterator[dict]:
    """The JSON objects of a server-sent-event stream (`data: {...}` lines, `[DONE]` ends it)."""
    with client.stream("POST", url, json=body) as response:
        if response.status_code != 200:
            head = next(response.iter_bytes(), b"")[:200].decode(errors="replace")
            raise BenchError(f"POST {url} returned HTTP {response.status_code}: {head!r}")
        for line in _lines(response, url):
            if not line.startswith("data:") or line.strip() == "data: [DONE]":
                continue
            try:
                chunk = parse_json(line[5:])
            except ValueError:
                chunk = None
            if not isinstance(chunk, dict):
                raise BenchError(
                    f"POST {url} streamed a line that is no JSON object: {line[:120]!r}"
                )
            yield chunk


def _one_openai(
    client: httpx.Client, url: str, model: str, input_len: int, output_len: int, i: int
) -> RequestSample:
    body = {
        "model": model,
        "prompt": _prompt(input_len, i),
        "max_tokens": output_len,
        "temperature": 0.0,
        "stream": True,
        "ignore_eos": True,
        "stream_options": {"include_usage": True},
    }
    start = time.perf_counter()
    first = None
    chunks = 0
    usage: dict = {}
    for chunk in _stream_chunks(client, url, body):
        if chunk.get("choices"):
            chunks += 1
            if first is None:
                first = time.perf_counter() - start
        usage = _object(chunk, "usage", url) or usage
    latency = time.perf_counter() - start
    tokens = usage.get("completion_tokens") or chunks
    return _sample(
        url,
        latency_s=latency,
        ttft_s=first,
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=tokens,
        time_source="client",
        meta_info=usage,
    )


def _one_generate(
    client: httpx.Client, url: str, input_len: int, output_len: int, i: int
) -> RequestSample:
    body = {
        "text": _prompt(input_len, i),
        "stream": True,
        "sampling_params": {"max_new_tokens": output_len, "temperature": 0.0, "ignore_eos": True},
    }
    start = time.perf_counter()
    first_client = first_server = None
    meta: dict = {}
    for chunk in _stream_chunks(client, url, body):
        meta = _object(chunk, "meta_info", url)
        if first_client is None:
            first_client = time.perf_counter() - start
            first_server = meta.get("e2e_latency")
    client_latency = time.perf_counter() - start
    if not is_measurement(meta.get("completion_tokens")):
        raise BenchError(
            f"POST {url} replied without a token count "
            f"(meta_info.completion_tokens = {meta.get('completion_tokens')!r})"
        )
    # the server's clock when it gives usable times; else ours (never a NaN or negative time)
    server = is_measurement(meta.get("e2e_latency")) and is_measurement(first_server)
    return _sample(
        url,
        latency_s=meta["e2e_latency"] if server else client_latency,
        ttft_s=first_server if server else first_client,
        prompt_tokens=meta.get("prompt_tokens"),
        completion_tokens=meta["completion_tokens"],
        time_source="server" if server else "client",
        meta_info=meta,
    )


# what derive_metrics can give (verify_ms and accept_len: where the server reports its cycles)
SERVING_METRICS = ("latency_ms", "tok_s", "tpot_ms", "ttft_ms", "verify_ms", "accept_len")


def _verify_count(s: RequestSample) -> int:
    """meta_info.spec_verify_ct: the request's verify cycles (0 or absent: not speculative)."""
    count = s.meta_info.get("spec_verify_ct")
    if count is None or count == 0:
        return 0
    if isinstance(count, int) and not isinstance(count, bool) and count > 0:
        return count
    raise BenchError(f"the server's meta_info.spec_verify_ct = {count!r}: not a count of cycles")


def _accept_length(s: RequestSample) -> float | None:
    length = s.meta_info.get("spec_accept_length")
    if length is None or is_measurement(length):
        return length
    raise BenchError(f"the server's meta_info.spec_accept_length = {length!r}: not a length")


def derive_metrics(samples: list[RequestSample]) -> dict[str, Metric]:
    """tok/s, request latency, TPOT and TTFT, and for speculative decoding the cycle ("verify")
    time and accept length."""
    source = samples[0].time_source
    series: dict[str, tuple[str, list[float]]] = {
        "tok_s": ("tok/s", [s.completion_tokens / s.latency_s for s in samples]),
        # each request end to end: what "latency 40ms" names (before, no bench measured it)
        "latency_ms": ("ms", [1000 * s.latency_s for s in samples]),
    }
    decode = [(s, s.latency_s - (s.ttft_s or 0.0)) for s in samples if s.completion_tokens > 1]
    if decode:
        series["tpot_ms"] = ("ms", [1000 * d / (s.completion_tokens - 1) for s, d in decode])
        series["ttft_ms"] = ("ms", [1000 * (s.ttft_s or 0.0) for s, _ in decode])
    verify = [(s, d, count) for s, d in decode if (count := _verify_count(s))]
    if verify:
        series["verify_ms"] = ("ms", [1000 * d / count for _, d, count in verify])
        series["accept_len"] = (
            "tokens",
            [_accept_length(s) or s.completion_tokens / count for s, _, count in verify],
        )
    return {
        name: Metric(
            name=name,
            unit=unit,
            median=statistics.median(values),
            mean=statistics.fmean(values),
            samples=values,
            source=source,
        )
        for name, (unit, values) in series.items()
    }


def _model_name(client: httpx.Client, base_url: str) -> str:
    """The first model /v1/models names; "default" where it names none (or is not JSON)."""
    try:
        listing = get_json(client, base_url + "/v1/models")
    except httpx.HTTPError:
        return "default"
    models = listing.get("data") if isinstance(listing, dict) else None
    first = models[0] if isinstance(models, list) and models else None
    name = first.get("id") if isinstance(first, dict) else None
    return name if isinstance(name, str) and name else "default"


def _in_time(
    future: Future[RequestSample], deadline: float, timeout_s: float, where: str
) -> RequestSample:
    try:
        return future.result(timeout=max(0.0, deadline - time.monotonic()))
    except FutureTimeout:
        raise BenchError(f"the bench ran past bench.timeout_s ({timeout_s:g} s): {where}") from None


def run_http_bench(
    base_url: str,
    kind: str,
    requests: int,
    concurrency: int,
    input_len: int,
    output_len: int,
    warmup: int = 1,
    timeout_s: float = 600.0,
    on_done: Callable[[int, int], None] | None = None,
    api_key: str | None = None,
) -> BenchResult:
    """`requests` streamed calls at `concurrency`, after `warmup` discarded ones.

    kind "generate" posts to SGLang's /generate, "openai" to /v1/completions; `api_key` is the
    server's --api-key, sent as a bearer token.
    """
    base_url = base_url.rstrip("/")
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    try:
        with server_client(timeout_s, api_key, limits) as client:
            if kind == "openai":
                url, model = base_url + "/v1/completions", _model_name(client, base_url)

                def one(i: int) -> RequestSample:
                    return _one_openai(client, url, model, input_len, output_len, i)
            else:
                url = base_url + "/generate"

                def one(i: int) -> RequestSample:
                    return _one_generate(client, url, input_len, output_len, i)

            # the whole bench within timeout_s: a server that streams without end (or a byte
            # at a time) never trips httpx's timeout, which is per read
            deadline = time.monotonic() + timeout_s
            pool = DaemonPool(concurrency, "bench")
            try:
                for i in range(warmup):
                    warm = pool.submit(partial(one, -1 - i))
                    _in_time(warm, deadline, timeout_s, "a warm-up request")
                samples: list[RequestSample] = []
                for future in [pool.submit(partial(one, i)) for i in range(requests)]:
                    answered = f"{len(samples)} of {requests} requests answered"
                    samples.append(_in_time(future, deadline, timeout_s, answered))
                    if on_done:
                        on_done(len(samples), requests)
            finally:
                # on Ctrl-C or an error, never wait for requests still in flight: stopping the
                # server (the caller's next step) ends them
                pool.shutdown()
    except httpx.HTTPError as e:
        raise BenchError(
            f"benchmark request to {base_url} failed: {type(e).__name__}: {e}"
        ) from None
    return BenchResult(samples=samples, metrics=derive_metrics(samples))
