"""What the user says got worse: "verify 29ms", "60 tok/s (was 82)", "TPOT 35ms"."""

from __future__ import annotations

import math
import re
from typing import Literal

from pydantic import BaseModel

from tools.errors import ToolError

# metric name -> (words that name it, unit, which direction is better)
METRICS: dict[str, tuple[tuple[str, ...], str, Literal["lower", "higher"]]] = {
    "verify_ms": (("verify", "cycle", "spec"), "ms", "lower"),
    "tpot_ms": (("tpot", "itl", "decode", "per-token", "per token"), "ms", "lower"),
    "ttft_ms": (("ttft", "first token", "prefill"), "ms", "lower"),
    "tok_s": (("tok/s", "tokens/s", "throughput", "tps"), "tok/s", "higher"),
    "latency_ms": (("latency", "e2e", "response time"), "ms", "lower"),
}
ACCEPTED = (
    '"verify 29ms", "verify 29ms (was 19)", "60 tok/s (was 82)", "TPOT 35ms", '
    '"TTFT 900ms", "latency 40ms"'
)

# exponents are read too: "1e400ms" must be refused as out of range, never read as "1"
_NUMBER = r"(?<![\w.-])(\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*(ms|s|tok/s|tokens/s)?"


class SymptomError(ToolError):
    pass


class Symptom(BaseModel):
    text: str
    metric: str
    unit: str
    direction: Literal["lower", "higher"]
    bad: float
    good: float | None = None


def _value_in_unit(number: str, unit: str | None, target_unit: str) -> float:
    value = float(number)
    if unit == "s" and target_unit == "ms":
        value *= 1000.0
    if not math.isfinite(value) or value > 1e12:
        raise SymptomError(f"the symptom's value {number}{unit or ''} is out of range")
    return value


def parse_symptom(text: str) -> Symptom:
    lowered = text.strip().lower()
    main = re.sub(r"\(.*?\)", " ", lowered)
    metric = None
    for name, (words, _, _) in METRICS.items():
        if any(word in main for word in words):
            metric = name
            break
    numbers = re.findall(_NUMBER, main)
    if metric is None and numbers and numbers[0][1] in ("tok/s", "tokens/s"):
        metric = "tok_s"
    if metric is None or not numbers:
        raise SymptomError(f"cannot read the symptom {text!r}; accepted forms: {ACCEPTED}")
    _, unit, direction = METRICS[metric]
    with_unit = [n for n in numbers if n[1]]
    number, number_unit = (with_unit or numbers)[0]  # each found number is (value, its unit)
    bad = _value_in_unit(number, number_unit, unit)
    good = None
    went = re.search(r"from\s*" + _NUMBER + r"\s*to\s*" + _NUMBER, lowered)
    was = re.search(r"(?:was|vs\.?|baseline)\s*" + _NUMBER, lowered)
    if went:
        good = _value_in_unit(went.group(1), went.group(2) or went.group(4), unit)
        bad = _value_in_unit(went.group(3), went.group(4), unit)
    elif was:
        good = _value_in_unit(was.group(1), was.group(2), unit)
    if bad <= 0 or (good is not None and good <= 0):
        raise SymptomError(f"the symptom's values must be positive: {text!r}")
    if good is not None and (bad < good if direction == "lower" else bad > good):
        better = "lower" if direction == "lower" else "higher"
        raise SymptomError(
            f"the symptom {text!r} describes an improvement: {bad:g} {unit} now "
            f"against {good:g} before, and {better} is better for {metric}; "
            'write the slower value first, e.g. "verify 29ms (was 19)"'
        )
    return Symptom(text=text, metric=metric, unit=unit, direction=direction, bad=bad, good=good)
