"""Load generator against SGLang's /generate: per-request samples and the metrics derived from them.

Times come from the server's own meta_info (`e2e_latency`, and the first streamed chunk for the
time to first token) when it reports them, else from the client's clock; each metric says which.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx
from pydantic import BaseModel

from tools.errors import ToolError


class BenchError(ToolError):
    pass


class RequestSample(BaseModel):
    latency_s: float
    ttft_s: float | None
    prompt_tokens: int | None
    completion_tokens: int
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


def _prompt(input_len: int, i: int) -> str:
    # about four characters per token, and a different prompt per request
    return (f"request {i}: " + "tell me about speculative decoding " * input_len)[: input_len * 4]


def _one_generate(client: httpx.Client, url: str, input_len: int, output_len: int,
                  i: int) -> RequestSample:
    body = {"text": _prompt(input_len, i), "stream": True,
            "sampling_params": {"max_new_tokens": output_len, "temperature": 0.0,
                                "ignore_eos": True}}
    start = time.perf_counter()
    first_client = first_server = None
    meta: dict = {}
    with client.stream("POST", url, json=body) as response:
        if response.status_code != 200:
            response.read()
            raise BenchError(f"POST {url} returned HTTP {response.status_code}: "
                             f"{response.text[:200]}")
        for line in response.iter_lines():
            if not line.startswith("data:") or line.strip() == "data: [DONE]":
                continue
            chunk = json.loads(line[5:])
            meta = chunk.get("meta_info") or {}
            if first_client is None:
                first_client = time.perf_counter() - start
                first_server = meta.get("e2e_latency")
    client_latency = time.perf_counter() - start
    if "completion_tokens" not in meta:
        raise BenchError(f"POST {url} replied without meta_info.completion_tokens")
    server = meta.get("e2e_latency") is not None and first_server is not None
    return RequestSample(
        latency_s=meta["e2e_latency"] if server else client_latency,
        ttft_s=first_server if server else first_client,
        prompt_tokens=meta.get("prompt_tokens"),
        completion_tokens=meta["completion_tokens"],
        time_source="server" if server else "client",
        meta_info=meta,
    )


def derive_metrics(samples: list[RequestSample]) -> dict[str, Metric]:
    """tok/s, TPOT, and for speculative decoding the cycle ("verify") time and accept length."""
    source = samples[0].time_source
    series: dict[str, tuple[str, list[float]]] = {
        "tok_s": ("tok/s", [s.completion_tokens / s.latency_s for s in samples]),
    }
    decode = [(s, s.latency_s - (s.ttft_s or 0.0)) for s in samples if s.completion_tokens > 1]
    if decode:
        series["tpot_ms"] = ("ms", [1000 * d / (s.completion_tokens - 1) for s, d in decode])
        series["ttft_ms"] = ("ms", [1000 * (s.ttft_s or 0.0) for s, _ in decode])
    verify = [(s, d) for s, d in decode if s.meta_info.get("spec_verify_ct")]
    if verify:
        series["verify_ms"] = ("ms", [1000 * d / s.meta_info["spec_verify_ct"] for s, d in verify])
        series["accept_len"] = ("tokens", [s.meta_info.get("spec_accept_length") or
                                           s.completion_tokens / s.meta_info["spec_verify_ct"]
                                           for s, _ in verify])
    return {
        name: Metric(name=name, unit=unit, median=statistics.median(values),
                     mean=statistics.fmean(values), samples=values, source=source)
        for name, (unit, values) in series.items()
    }


def run_generate_bench(base_url: str, requests: int, concurrency: int, input_len: int,
                       output_len: int, warmup: int = 1, timeout_s: float = 600.0,
                       on_done: Callable[[int, int], None] | None = None) -> BenchResult:
    """`requests` streamed /generate calls at `concurrency`, after `warmup` discarded ones."""
    url = base_url.rstrip("/") + "/generate"
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    try:
        # plain HTTP to a local server: skip building a TLS context (tens of ms per client)
        with httpx.Client(timeout=timeout_s, limits=limits, verify=False) as client:
            for i in range(warmup):
                _one_generate(client, url, input_len, output_len, -1 - i)
            with ThreadPoolExecutor(max_workers=concurrency) as pool:
                futures = [pool.submit(_one_generate, client, url, input_len, output_len, i)
                           for i in range(requests)]
                samples = []
                for future in futures:
                    samples.append(future.result())
                    if on_done:
                        on_done(len(samples), requests)
    except httpx.HTTPError as e:
        raise BenchError(f"benchmark request to {url} failed: {e}") from None
    return BenchResult(samples=samples, metrics=derive_metrics(samples))
