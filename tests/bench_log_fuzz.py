"""The SGLang log parser on mutated real logs: truncated lines, stray brackets and quotes,
spliced and reversed lines, shuffled characters. Any exception, or any Python warning printed
on the way, is a finding.

    python tests/bench_log_fuzz.py [--seconds 60] [--seed 1]

Not a test: it runs for as long as it is given (the suite holds the cases it found).
"""

from __future__ import annotations

import argparse
import random
import time
import traceback
import warnings
from pathlib import Path

from tools.sglang.log import parse_log

HERE = Path(__file__).parent
INSERTS = [
    "=",
    ",",
    "(",
    ")",
    "'",
    '"',
    "[",
    "]",
    "{",
    "}",
    ":",
    " ",
    "\x00",
    "nan",
    "-1e999",
    "None",
    "\\",
    "1if",
    "<",
    ">",
]


def mutate(lines: list[str], rng: random.Random) -> str:
    lines = list(lines)
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(lines))
        line, kind = lines[i], rng.random()
        cut = rng.randrange(len(line)) if line else 0
        if kind < 0.3:
            lines[i] = line[:cut]
        elif kind < 0.5:
            lines[i] = line[:cut] + rng.choice(INSERTS) + line[cut:]
        elif kind < 0.65:
            lines[i] = line + rng.choice(lines)
        elif kind < 0.8:
            lines.insert(i, rng.choice(lines)[::-1])
        else:
            lines[i] = "".join(rng.choice(line or "x") for _ in line)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    logs = sorted((HERE / "data" / "sglang-logs").glob("*.log"))
    logs += sorted((HERE / "fixtures" / "sglang_logs").glob("*.log"))
    texts = [lines for p in logs if (lines := p.read_text(errors="replace").splitlines())]
    rng, runs, findings = random.Random(args.seed), 0, {}
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        text = mutate(rng.choice(texts), rng)
        runs += 1
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                parse_log(text)
            except Exception as error:  # a finding, kept with the input that gave it
                where = traceback.extract_tb(error.__traceback__)[-1]
                findings.setdefault((type(error).__name__, where.filename, where.lineno), text)
        for warning in caught:
            findings.setdefault((warning.category.__name__, warning.filename, warning.lineno), text)
    print(
        f"{runs} mutated logs from {len(texts)} real ones in {args.seconds:g} s: "
        f"{len(findings)} kinds of finding"
    )
    for (kind, file, line), text in findings.items():
        print(f"- {kind} at {file}:{line}, on:\n{text[:400]}")


if __name__ == "__main__":
    main()
