"""What the user says got worse: "verify 29ms", "60 tok/s (was 82)", "TPOT 35ms", or any metric
of a command bench: "parse_ms 265 (was 7)", "265ms (was 7)", "throughput 1200 rows/s (was 2000)".

A time (ms, s, us) is worse when higher, a rate (tok/s, rows/s, anything per second) when lower;
with neither unit nor a telling name, the value before says which way it went.
"""

from __future__ import annotations

import math
import re
from typing import Literal

from pydantic import BaseModel

from tools.config import CONFIG_NAME, BenchSection, TargetConfig
from tools.errors import ToolError
from tools.visible import has_control, visible, without_escapes

Better = Literal["lower", "higher"]

# the serving benchmark's metrics: name -> (words that name it, unit, which direction is better)
METRICS: dict[str, tuple[tuple[str, ...], str, Better]] = {
    "verify_ms": (("verify", "cycle", "spec"), "ms", "lower"),
    "tpot_ms": (("tpot", "itl", "decode", "per-token", "per token"), "ms", "lower"),
    "ttft_ms": (("ttft", "first token", "prefill"), "ms", "lower"),
    "tok_s": (("tok/s", "tokens/s", "throughput", "tps"), "tok/s", "higher"),
    "latency_ms": (("latency", "e2e", "response time"), "ms", "lower"),
}
ACCEPTED = (
    '"verify 29ms", "verify 29ms (was 19)", "60 tok/s (was 82)", "TPOT 35ms", '
    '"TTFT 900ms", "latency 40ms"; for a command bench its metric: "parse_ms 265 (was 7)", '
    '"265ms (was 7)", "throughput 1200 rows/s (was 2000)"'
)
# a time unit's length in seconds
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0}
# words a symptom may describe a command bench's metric with, whatever its name
PLAIN_WORDS = ("time", "duration", "runtime", "latency", "throughput", "speed", "rate")

# exponents are read too: "1e400ms" must be refused as out of range, never read as "1"
_UNIT = r"[a-zµ_]+/s(?:ec)?\b|ns\b|us\b|µs\b|ms\b|sec\b|s\b"
_NUMBER = rf"(?<![\w.-])(\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*({_UNIT})?"


class SymptomError(ToolError):
    pass


class Symptom(BaseModel):
    text: str
    metric: str  # "" where the symptom names none (a command bench's metric stands)
    unit: str
    direction: Better  # which way is better
    bad: float
    good: float | None = None


class _Read(BaseModel):
    """A symptom's words as written: the metric's name, the values and their unit."""

    name: str  # normalized: "parse_ms", "verify", "" (none)
    serving: str | None  # the serving metric its words name, where they fit its unit
    unit: str  # as written ("" for none): the bad value's, else the good one's
    bad: str
    good: str | None
    good_unit: str  # the good value's own unit, where it has one


# a change, not a value ("50% slower", "+50 %"): never read as a value in the metric's unit
_PERCENT = r"[+-]?(?<![\w.])\d+(?:\.\d+)?\s*%"
# the value before and after, joined by an arrow or "to": "19ms -> 29ms", "from 7 to 265"
_ARROW = r"(?:from\s*)?" + _NUMBER + r"\s*(?:to|->|→|=>|⇒|~>)\s*" + _NUMBER
# the value before, said after it: "(19ms before)", "(19 previously)"
_BEFORE = _NUMBER + r"\s*(?:before|previously|earlier|prior)\b"


def _read(text: str) -> _Read:
    if comma := re.search(r"\d+(?:,\d+)+", text):  # "29,5ms" was read as 5 ms
        raise SymptomError(
            f"the symptom {text!r} writes {comma[0]!r} with a comma, a decimal point in some "
            "languages and a thousands separator in others: write it with a point and no "
            'separator, e.g. "verify 29.5ms (was 19)"'
        )
    lowered = re.sub(_PERCENT, " ", text.strip().lower())
    if re.search(r"(?:^|[\s(:=])-\s*\d", lowered):  # "(was -1)" would read as no value before
        raise SymptomError(f"the symptom's values must be positive: {text!r}")
    main = re.sub(r"\(.*?\)", " ", lowered)
    numbers = list(re.finditer(_NUMBER, main))
    if not numbers and re.search(_PERCENT, text):
        raise SymptomError(
            f"the symptom {text!r} gives a change, not a value to measure against: write the "
            'value now and before, e.g. "verify 29ms (was 19)"'
        )
    if not numbers:
        raise SymptomError(f"cannot read the symptom {text!r}; accepted forms: {ACCEPTED}")
    first = next((n for n in numbers if n.group(2)), numbers[0])
    bad, unit = first.group(1), first.group(2) or ""
    before = re.sub(r"\bfrom\s*$", "", main[: numbers[0].start()])  # "x from 7ms to 9ms"
    name = re.sub(r"[^a-z0-9_]+", "_", before).strip("_")
    good, good_unit = None, ""
    went = re.search(_ARROW, lowered)
    was = re.search(r"(?:was|vs\.?|baseline|before:?)\s*" + _NUMBER, lowered) or re.search(
        _BEFORE, lowered
    )
    if went:
        bad, unit = went.group(3), went.group(4) or ""
        good, good_unit = went.group(1), went.group(2) or unit
    elif was:
        good, good_unit = was.group(1), was.group(2) or unit
    unit = unit or good_unit
    return _Read(
        name=name,
        serving=_serving_metric(main, unit),
        unit=unit,
        bad=bad,
        good=good,
        good_unit=good_unit or unit,
    )


# words that name a time and nothing else: "decode" and "prefill" also name throughputs
_TIME_WORDS = ("verify", "cycle", "ttft", "first token", "tpot", "itl", "latency")


def _serving_metric(main: str, unit: str) -> str | None:
    """The serving metric the words name, if the unit written fits it."""
    if unit in ("tok/s", "tokens/s"):
        if word := next((w for w in _TIME_WORDS if re.search(rf"\b{w}\b", main)), None):
            raise SymptomError(  # "verify 29 tok/s" was read as the throughput, silently
                f"the symptom names {word!r}, a time, but gives a rate in {unit}: write "
                f'"{word} 29ms (was 19)" for its time, or "60 tok/s (was 82)" for the throughput'
            )
        return "tok_s"
    for name, (words, metric_unit, _) in METRICS.items():
        if any(word in main for word in words) and (not unit or _same_kind(unit, metric_unit)):
            return name
    return None


def _same_kind(unit: str, other: str) -> bool:
    return (unit in TIME_UNITS and other in TIME_UNITS) or unit == other


def unit_direction(unit: str) -> Better | None:
    """Lower is better for a time, higher for a rate; None for a unit that says neither."""
    if unit in TIME_UNITS:
        return "lower"
    if unit.endswith(("/s", "/sec")):
        return "higher"
    return None


def name_direction(metric: str) -> tuple[str, Better | None]:
    """The unit and direction a metric's name tells ("parse_ms": ms, lower), where it does."""
    last = metric.rsplit("_", 1)[-1] if "_" in metric else ""
    if last in TIME_UNITS:
        return last, "lower"
    if any(word in metric for word in ("time", "latency", "duration")):
        return "", "lower"
    if metric.endswith(("_per_s", "per_sec", "_qps", "_rps", "tok_s")) or any(
        word in metric for word in ("throughput", "rate", "speed")
    ):
        return "", "higher"
    return "", None


def _value(number: str, unit: str, target_unit: str) -> float:
    value = float(number)
    if unit in TIME_UNITS and target_unit in TIME_UNITS:
        value *= TIME_UNITS[unit] / TIME_UNITS[target_unit]
    if not math.isfinite(value) or value > 1e12:
        shown = number if len(number) <= 24 else f"{number[:12]}...({len(number)} digits)"
        raise SymptomError(f"the symptom's value {shown}{unit} is out of range")
    return value


def parse_symptom(text: str, bench: BenchSection | None = None) -> Symptom:
    """The symptom; with `bench`, about what that bench measures (a command bench: its metric,
    in its unit; a symptom naming another metric is an error)."""
    text = without_escapes(text)  # pasted from a coloured terminal: `\x1b[31m` is no 31
    if has_control(text):
        raise SymptomError(
            f"the symptom {visible(text)!r} holds control characters: write it plainly"
        )
    read = _read(text)
    if bench is not None and bench.kind == "command":
        metric, unit, direction = _command_metric(text, read, bench)
    elif read.serving is not None:
        metric = read.serving
        _, unit, direction = METRICS[metric]
    elif bench is not None:
        raise SymptomError(f"cannot read the symptom {text!r}; accepted forms: {ACCEPTED}")
    else:  # no bench to go by: any metric, as written
        metric = read.name
        named_unit, named = name_direction(metric)
        unit = read.unit or named_unit
        direction = unit_direction(unit) or named or _went(text, read)
    return _symptom(text, read, metric, unit, direction)


def _command_metric(text: str, read: _Read, bench: BenchSection) -> tuple[str, str, Better]:
    """A command bench's metric, unit and direction, checked against what the symptom says."""
    metric = bench.metric
    named_unit, named = name_direction(metric)
    unit = bench.unit or named_unit
    if read.name and not (
        read.name == metric
        or read.serving == metric
        or set(read.name.split("_")) <= set(metric.split("_"))  # "per token": ms_per_token
        or read.name in PLAIN_WORDS
    ):
        raise SymptomError(
            f"the symptom {text!r} names {read.name!r}, but the bench measures {metric!r}: "
            f'write "{metric} {read.bad} (was ...)" or leave the name out'
        )
    if read.unit and unit and not _same_kind(read.unit, unit):
        raise SymptomError(
            f"the symptom {text!r} is in {read.unit}, but the bench measures {metric} in {unit}"
        )
    unit = unit or read.unit
    return metric, unit, unit_direction(unit) or named or _went(text, read)


def _went(text: str, read: _Read) -> Better:
    """Which way is better, from the symptom's own two values: it says the value got worse."""
    if read.good is None or float(read.good) == float(read.bad):
        raise SymptomError(
            f"cannot tell from {text!r} whether higher or lower is worse: give a unit "
            '("265ms", "1200 rows/s") or the value before ("(was 7)")'
        )
    return "lower" if float(read.bad) > float(read.good) else "higher"


def _symptom(text: str, read: _Read, metric: str, unit: str, direction: Better) -> Symptom:
    bad = _value(read.bad, read.unit, unit)
    good = None if read.good is None else _value(read.good, read.good_unit, unit)
    if bad <= 0 or (good is not None and good <= 0):
        raise SymptomError(f"the symptom's values must be positive: {text!r}")
    if good is not None and bad == good:
        raise SymptomError(
            f"the symptom {text!r} describes no change: {bad:g} {unit} now and before; give "
            'the value before the regression, or leave "(was ...)" out'
        )
    if good is not None and (bad < good if direction == "lower" else bad > good):
        raise SymptomError(
            f"the symptom {text!r} describes an improvement: {bad:g} {unit} now "
            f"against {good:g} before, and {direction} is better for {metric or 'it'}; "
            'write the slower value first, e.g. "verify 29ms (was 19)"'
        )
    return Symptom(text=text, metric=metric, unit=unit, direction=direction, bad=bad, good=good)


def configured_symptom(config: TargetConfig) -> str | None:
    """The config's `[symptom] default`, checked against what the target's bench measures (a
    config with a default it cannot read is wrong, whether or not --symptom overrides it)."""
    default = config.symptom.default
    if default is not None:
        try:
            parse_symptom(default, config.bench)
        except SymptomError as e:
            raise SymptomError(f"{CONFIG_NAME} [symptom] default: {e}") from None
    return default


def given_or_configured(text: str | None, config: TargetConfig, command: str) -> str:
    """The symptom given on the command line, else the config's `[symptom] default`."""
    default = configured_symptom(config)
    if text is not None:
        return text
    if default is None:
        raise SymptomError(
            f'{command} needs --symptom TEXT (e.g. "verify 29ms"), a [symptom] default in '
            f"{CONFIG_NAME}, or --resume ID"
        )
    return default
