"""Symptoms: the serving forms, and any metric and unit of a command bench, with the direction
(which way is worse) right."""

from __future__ import annotations

import pytest

from agent.symptom import SymptomError, parse_symptom
from tools.config import BenchSection

PARSE_MS = BenchSection(kind="command", command="x", metric="parse_ms", metric_regex="(x)")
ROWS = BenchSection(
    kind="command", command="x", metric="rows_per_s", unit="rows/s", metric_regex="(x)"
)
SCORE = BenchSection(kind="command", command="x", metric="score", metric_regex="(x)")
PER_TOKEN = BenchSection(kind="command", command="x", metric="ms_per_token", metric_regex="(x)")


@pytest.mark.parametrize(
    ("text", "bench", "metric", "unit", "better", "bad", "good"),
    [
        ("verify 29ms", None, "verify_ms", "ms", "lower", 29, None),
        ("verify 29ms (was 19)", BenchSection(), "verify_ms", "ms", "lower", 29, 19),
        ("60 tok/s (was 82)", None, "tok_s", "tok/s", "higher", 60, 82),
        ("TTFT 0.9s", None, "ttft_ms", "ms", "lower", 900, None),
        ("latency 12", None, "latency_ms", "ms", "lower", 12, None),
        ("parse_ms 265 (was 7)", None, "parse_ms", "ms", "lower", 265, 7),
        ("parse_ms 265 (was 7)", PARSE_MS, "parse_ms", "ms", "lower", 265, 7),
        ("265ms (was 7)", PARSE_MS, "parse_ms", "ms", "lower", 265, 7),
        ("0.265s (was 7ms)", PARSE_MS, "parse_ms", "ms", "lower", 265, 7),
        ("parse_ms from 7 to 265", PARSE_MS, "parse_ms", "ms", "lower", 265, 7),
        ("throughput 1200 rows/s (was 2000)", ROWS, "rows_per_s", "rows/s", "higher", 1200, 2000),
        ("throughput 1200 rows/s (was 2000)", None, "throughput", "rows/s", "higher", 1200, 2000),
        ("per token 40ms", PER_TOKEN, "ms_per_token", "ms", "lower", 40, None),  # its words
        ("score 40 (was 90)", SCORE, "score", "", "higher", 40, 90),  # the values tell
        ("score 90 (was 40)", SCORE, "score", "", "lower", 90, 40),
        # as people write them: arrows, "before" after the value, a percent beside the value
        ("verify step 19ms -> 29ms", None, "verify_ms", "ms", "lower", 29, 19),
        ("verify_ms: 19 → 29", None, "verify_ms", "ms", "lower", 29, 19),
        ("spec verify regressed 19->29ms", None, "verify_ms", "ms", "lower", 29, 19),
        ("29ms verify (19ms before)", None, "verify_ms", "ms", "lower", 29, 19),
        ("TPOT 35ms (before: 20ms)", None, "tpot_ms", "ms", "lower", 35, 20),
        ("verify 29ms (+50%)", None, "verify_ms", "ms", "lower", 29, None),
        # copied from a coloured terminal: `\x1b[31m` is a colour, not 31 ms
        ("verify \x1b[31m29ms\x1b[0m (was 19)", None, "verify_ms", "ms", "lower", 29, 19),
    ],
)
def test_symptoms_read(
    text: str,
    bench: BenchSection | None,
    metric: str,
    unit: str,
    better: str,
    bad: float,
    good: float | None,
) -> None:
    symptom = parse_symptom(text, bench)
    assert (symptom.metric, symptom.unit, symptom.direction) == (metric, unit, better)
    assert symptom.bad == pytest.approx(bad) and symptom.good == pytest.approx(good)


@pytest.mark.parametrize(
    ("text", "bench", "says"),
    [
        ("verify 29ms", PARSE_MS, "names 'verify', but the bench measures 'parse_ms'"),
        ("265 tok/s", PARSE_MS, "is in tok/s, but the bench measures parse_ms in ms"),
        ("parse_ms 7 (was 265)", PARSE_MS, "describes an improvement"),
        ("1500 rows/s (was 1200)", ROWS, "describes an improvement"),
        ("score 40", SCORE, "whether higher or lower is worse"),
        ("parse_ms 265", BenchSection(), "cannot read the symptom"),
        ("it is slow", PARSE_MS, "accepted forms"),
        ("verify 29ms (was 45)", None, "describes an improvement"),
        ("verify 29ms (was 29)", None, "describes no change: 29 ms now and before"),
        ("TTFT 0.9s (was 900ms)", None, "describes no change: 900 ms"),
        ("parse_ms 265 (was 265)", PARSE_MS, "describes no change"),
        ("verify is 50% slower", None, "gives a change, not a value"),  # never 50 ms
        ("verify 29,5ms", None, "writes '29,5' with a comma"),  # it was read as 5 ms
        ("verify 29 tok/s", None, "names 'verify', a time, but gives a rate in tok/s"),
        ("TTFT 900 tokens/s (was 1200)", None, "names 'ttft', a time"),
        ("1,200 tok/s (was 2,000)", None, "writes '1,200' with a comma"),
        ("verify 29ms\x08\x08\x0839ms", None, "holds control characters"),
        ("parse_ms 5 (was -1)", PARSE_MS, "values must be positive"),  # read as no "was"
        ("verify -29ms (was 19)", None, "values must be positive"),
        ("verify " + "9" * 5000 + "ms", None, "999999999999...(5000 digits)ms is out of range"),
    ],
)
def test_symptoms_refused(text: str, bench: BenchSection | None, says: str) -> None:
    with pytest.raises(SymptomError, match=None) as refused:
        parse_symptom(text, bench)
    assert says in str(refused.value)
