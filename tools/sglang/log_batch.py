"""SGLang's periodic `Prefill batch` / `Decode batch` scheduler lines, every known version.

The body after `batch[.,]` is `key: value` pairs split on commas; the set and order of keys vary
by version, device and pool (SGLang's log_prefill_stats / log_decode_stats, in
python/sglang/srt/managers/scheduler_metrics_mixin.py, formerly scheduler.py; examples in
tests/fixtures/sglang_logs/01-* to 12-*), so every pair is read and named by a normalised key, and
the fields the schema lists are typed.

A line cut mid-value (log truncation) must give null, never a partial number. Only the pair with
no comma after it can be cut. SGLang prints its rates with `%.2f`, so such a rate with fewer than
two decimals is cut; a `cuda graph` that is not exactly True/False is cut; and a count ending a
line under a key no whole line ends with (`#token: 625`) is where the line was cut.

A paste cut in the middle of a line (a terminal column cut, an editor's block selection) glues
the start of one key to the end of another: `token us|accept rate: 0.32`, `#cached-to|unning-req:
45`. The value after such a key is whole, and the key it ends with is read as that key's.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any

from tools.sglang.log_lines import SGLANG_BRACKET, rank_fields

# `Decode batch.` (<=0.5.4), `Decode batch,` (later), `Decode batch [N],` (forward iters logged).
BATCH = re.compile(r"\b(Prefill|Decode) batch(?: ?\[(\d{1,12})\])?(?: ?[.,:]| (?=#))")
_TAGS_ONLY = re.compile(r"\[((?:[A-Z][A-Z_]*\d+)(?: +[A-Z][A-Z_]*\d+){0,11})\]")
# A custom log format puts SGLang's rank tags before a file name in one bracket:
# `2025-10-20 03:02:22 INFO 31223 [DP3 TP3 EP3 scheduler_metrics_mixin.py:222] Decode batch.`
_RANK_TAG = r"(?:DP|TP|PP|EP|CP|ATTN_CP|ATTN_DP|MOE_DP|MOE_EP)\d{1,6}"
_TAGS_THEN_MORE = re.compile(rf"\[({_RANK_TAG}(?: +{_RANK_TAG}){{0,11}}) +[^\[\]]{{1,200}}\]")
# SGLang's `[ts tags] ` whose `[` a paste cut off: `2026-05-24 03:51:44 TP0] Decode batch, ...`
_CUT_BRACKET = re.compile(
    r"(?<![\d:])(?P<ts>(?:\d{4}-\d\d-\d\d[ T])?\d\d:\d\d:\d\d(?:[.,]\d{1,9})?)"
    r"(?P<tags>(?: +[A-Z][A-Z_]{0,19}\d{1,6}){0,12}) *\]"
)
_TIME = re.compile(
    r"(?<![\d:])(?:\d{4}-\d\d-\d\d[ T]|\d\d-\d\d )?\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?![\d:])"
)
_GPU = re.compile(r"\[gpu=(\d{1,6})\]")  # 0.2.x wrote `[gpu=0] Decode batch. ...`
_UNITS = re.compile(r"\([^)]*\)")
_NON_WORD = re.compile(r"[^a-z0-9]+")
_INT = re.compile(r"[-+]?\d+")
_FLOAT = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?\d+[eE][-+]?\d+")
_TWO_DECIMALS = re.compile(r"\.\d{2,}(?:[eE][-+]?\d+)?$")

_ALIASES = {
    "npu_graph": "cuda_graph",
    "cpu_graph": "cuda_graph",
    "xpu_graph": "cuda_graph",
    "hpu_graph": "cuda_graph",
    "musa_graph": "cuda_graph",
    "accept_length": "accept_len",
    "avg_accept_len": "accept_len",
    "est_decode_tflops_s": "est_tflops",
    "est_decode_tflops": "est_tflops",
}
INT_FIELDS = frozenset(
    {"running_req", "queue_req", "new_seq", "new_token", "cached_token", "token"}
)
# Printed with `%.2f` by every release, which is what makes a cut last value detectable.
TWO_DECIMAL_FIELDS = frozenset(
    {"gen_throughput", "input_throughput", "token_usage", "accept_len", "accept_rate"}
)
BOOL_FIELDS = frozenset({"cuda_graph"})
SCHEMA_FIELDS = INT_FIELDS | TWO_DECIMAL_FIELDS | BOOL_FIELDS
# What a whole line ends with in any release (`#queue-req`, prefill's throughput or graph flag,
# the optional metric suffixes). A count or unknown value ending a line under another key is
# where the line was cut: `#token: 625` may have been `#token: 62531`.
_LINE_END_FIELDS = frozenset(
    {
        "queue_req",
        "input_throughput",
        "cuda_graph",
        "gen_throughput",
        "est_tflops",
        "fwd_occupancy",
        "fwd_idle_occupancy",
    }
)
_PERCENT_FIELDS = frozenset({"cache_hit_rate", "fwd_occupancy", "fwd_idle_occupancy"})
_RESERVED = frozenset({"line", "time", "tp_rank", "dp_rank", "kind"})


@lru_cache(maxsize=4096)  # a log repeats the same dozen keys on every line
def normalise_key(key: str) -> str:
    """`gen throughput (token/s)` -> gen_throughput, `#running-req` -> running_req, ..."""
    name = _NON_WORD.sub("_", _UNITS.sub("", key.lower())).strip("_")
    name = _ALIASES.get(name, name)
    return f"{name}_field" if name in _RESERVED else name


def _scalar(token: str) -> Any:
    """A printed value as bool / int / float (None when not finite) / str; `%` dropped."""
    if token.endswith("%"):
        token = token[:-1]
    if token in ("True", "False"):
        return token == "True"
    if _INT.fullmatch(token):
        return int(token)
    if _FLOAT.fullmatch(token):
        value = float(token)
        return value if math.isfinite(value) else None
    if token.lower() in ("nan", "inf", "-inf", "none", "null"):
        return None
    return token or None


@lru_cache(maxsize=1 << 16)  # counts, flags and usages repeat line after line
def typed_value(name: str, raw: str, last: bool) -> Any:
    """The value of field `name` printed as `raw`, in the schema's type; None when it is not
    that type or was cut off (`last`: the pair ends a line that may have been cut)."""
    parts = raw.split(None, 1)
    token = parts[0] if parts else ""
    value = _as_type(name, _scalar(token))
    if last and value is not None and not _whole_at_line_end(name, token):
        return None
    return value


def _as_type(name: str, value: Any) -> Any:
    if name in BOOL_FIELDS:
        return value if isinstance(value, bool) else None
    if isinstance(value, bool):
        return None if name in SCHEMA_FIELDS else value
    if name in INT_FIELDS:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value if isinstance(value, int) else None
    if name in TWO_DECIMAL_FIELDS:
        return float(value) if isinstance(value, int | float) else None
    return value


def _whole_at_line_end(name: str, token: str) -> bool:
    """Whether a value that ends a line without a comma after it can be trusted as whole."""
    if name in BOOL_FIELDS:
        return True  # only exactly True/False got this far
    if name in TWO_DECIMAL_FIELDS:
        return bool(_TWO_DECIMALS.search(token.rstrip("%")))  # `178.8` is `178.86` cut short
    if token.endswith(".") or (name in _PERCENT_FIELDS and not token.endswith("%")):
        return False
    return name in _LINE_END_FIELDS


def parse_pairs(body: str) -> dict[str, Any]:
    """`k: v, k: v, ...` -> {normalised key: typed value}; the first non-null value of a key wins.

    Only the pair that ends the line can have been cut, and only when no comma follows it. A key
    is kept even when its value is unreadable (null): the line printed it.
    """
    # str.split: linear time whatever the line holds (a regex scanning for `key:` from every
    # position is not).
    items = body.split(",")
    cut_at = len(items) - 1 if ":" in items[-1] else -1  # no comma after the last pair
    fields: dict[str, Any] = {}
    for position, item in enumerate(items):
        pair = _pair(item, position == cut_at)
        if pair is not None and fields.get(pair[0]) is None:
            fields[pair[0]] = pair[1]
    return fields


@lru_cache(maxsize=1 << 16)  # `#running-req: 1`, `cuda graph: True` recur line after line
def _pair(item: str, last: bool) -> tuple[str, Any] | None:
    key, colon, raw = item.partition(":")
    if not colon or not 0 < len(key) <= 80:
        return None
    name = rejoined_key(normalise_key(key))
    return (name, typed_value(name, raw.strip(), last)) if name else None


_MIN_GLUED = 3  # characters of each key a glued name must hold


@lru_cache(maxsize=4096)
def rejoined_key(name: str) -> str:
    """The schema key a name glued by a mid-line cut ends with (see the module's docstring):
    the name is the start of one schema key (three characters or more) followed by the end of
    another (five or more). Any other name is returned as it is."""
    if name in SCHEMA_FIELDS or len(name) < 2 * _MIN_GLUED:
        return name
    best, best_tail = name, 0
    for key in sorted(SCHEMA_FIELDS):
        for tail in range(min(len(key), len(name) - _MIN_GLUED), 4, -1):
            if name.endswith(key[-tail:]):
                head = name[:-tail]
                if tail > best_tail and any(k.startswith(head) for k in SCHEMA_FIELDS):
                    best, best_tail = key, tail
                break
    return best


def _looks_like_record(prefix: str, fields: dict[str, Any]) -> bool:
    """A scheduler line, not prose or code: no quote before `Decode batch` (a source line in a
    traceback, an f-string), and a schema key or at least two numbers among unknown keys."""
    if "'" in prefix or '"' in prefix:
        return False
    if not SCHEMA_FIELDS.isdisjoint(fields):
        return True
    return sum(isinstance(v, int | float) for v in fields.values()) >= 2


def _stamp_and_ranks(prefix: str, outer_stamp: str | None) -> tuple[str | None, dict[str, int]]:
    """The printed time and rank tags from what precedes `Decode batch` on the line."""
    m = SGLANG_BRACKET.search(prefix) or _CUT_BRACKET.search(prefix)
    if m:
        return m.group("ts"), rank_fields(m.group("tags"))
    tags = _TAGS_ONLY.search(prefix) or _TAGS_THEN_MORE.search(prefix)
    ranks = dict(rank_fields(tags.group(1))) if tags else {}
    gpu = _GPU.search(prefix)
    if gpu:
        ranks["gpu_id"] = int(gpu.group(1))  # an extra key: a GPU id is not a TP rank
    stamp = _TIME.search(prefix)
    return (stamp.group(0) if stamp else outer_stamp), ranks


def parse_batch_line(
    body: str, outer_stamp: str | None = None
) -> tuple[str, dict[str, Any]] | None:
    """("decode" | "prefill", fields) for a scheduler batch line, None for anything else.

    `outer_stamp` is a transport's time (docker -t, journald), used when SGLang printed none."""
    m = BATCH.search(body)
    if m is None:
        return None
    fields = parse_pairs(body[m.end() :])
    if not _looks_like_record(body[: m.start()], fields):
        return None  # prose that mentions "Decode batch", or a source line in a traceback
    time, ranks = _stamp_and_ranks(body[: m.start()], outer_stamp)
    record: dict[str, Any] = {**fields, "time": time, "tp_rank": None, "dp_rank": None}
    for name, rank in ranks.items():
        record[name] = rank
    if m.group(2) is not None:
        record.setdefault("iter", int(m.group(2)))
    return m.group(1).lower(), record
