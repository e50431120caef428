"""Replay speed: `debug-agent replay --plain` of a synthetic 10,000-event transcript (goal <= 1 s).

python tests/bench_replay.py [--events 10000] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent.transcript import SCHEMA


def synthetic(folder: Path, events: int) -> None:
    with open(folder / "transcript.jsonl", "w") as out:
        out.write(
            json.dumps(
                {
                    "kind": "header",
                    "schema": SCHEMA,
                    "session": folder.name,
                    "symptom": {"text": "verify 29ms"},
                    "target": {"repo": "/x", "good": "HEAD"},
                }
            )
            + "\n"
        )
        kinds = ["thought", "hypothesis", "experiment", "verdict"]
        for seq in range(1, events + 1):
            kind = kinds[seq % 4]
            payload = (
                {"samples": [19.0 + i / 10 for i in range(8)], "log": "/x/server.log"}
                if kind == "experiment"
                else {"r": 0.5, "verdict": "partial", "launches": 1}
            )
            out.write(
                json.dumps(
                    {
                        "seq": seq,
                        "ts": 1.0 * seq,
                        "node": "plan",
                        "kind": kind,
                        "text": f"step {seq}: a sentence a reviewer reads",
                        "payload": payload,
                    }
                )
                + "\n"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    exe = shutil.which("debug-agent")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "synthetic"
        folder.mkdir()
        synthetic(folder, args.events)
        argv = ([exe] if exe else [sys.executable, "-m", "agent"]) + [
            "replay",
            str(folder),
            "--plain",
        ]
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - start)
    print(
        f"replay --plain of {args.events} events: median {statistics.median(times):.3f} s "
        f"(min {min(times):.3f}, max {max(times):.3f}) over {args.runs} runs"
    )


if __name__ == "__main__":
    main()
