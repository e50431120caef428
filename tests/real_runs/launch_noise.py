"""Launch-to-launch noise of the transformers lab on this machine, and what moves with it.

    python3 tests/real_runs/launch_noise.py [--rounds 3] [--out DIR]     (from the repo root)

Builds the lab, then runs rounds of single-launch `debug-agent experiment`s, one per variant
(the bad state, the culprit reverted), while the GPU's SM clock (nvidia-smi) and the VM's CPU
steal time (/proc/stat) are sampled beside them. Prints one row per launch: its median, the
spread of its requests, and the clock and steal seen while it ran; then each variant's
launch-to-launch spread.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tools.lab.truth import load_truth  # noqa: E402


def cpu_steal(out: Path, stop: threading.Event) -> None:
    """One line a second: time, steal share of all CPU time in that second (from /proc/stat)."""

    def read() -> tuple[int, int]:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
        return sum(fields), fields[7] if len(fields) > 7 else 0

    with out.open("w") as file:
        total, steal = read()
        while not stop.wait(1.0):
            now_total, now_steal = read()
            share = (now_steal - steal) / max(now_total - total, 1)
            file.write(f"{time.time():.1f} {share:.4f}\n")
            file.flush()
            total, steal = now_total, now_steal


def window(path: Path, start: float, end: float, column: int) -> float | None:
    values = []
    for line in path.read_text().splitlines() if path.exists() else []:
        parts = line.replace(",", " ").split()
        try:
            when, value = float(parts[0]), float(parts[column])
        except (IndexError, ValueError):
            continue
        if start <= when <= end:
            values.append(value)
    return statistics.mean(values) if values else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "/tmp/noise")))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": f"{REPO}:{os.environ.get('PYTHONPATH', '')}"}
    lab = Path(tempfile.mkdtemp()) / "lab"
    subprocess.run(
        [sys.executable, "-m", "agent", "lab", "create", "transformers", str(lab)],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    diff = json.loads(
        subprocess.run(
            [sys.executable, "-m", "agent", "diff", "--json"],
            cwd=lab,
            env=env,
            check=True,
            capture_output=True,
        ).stdout
    )
    culprit = load_truth(lab).culprits[0]
    culprit_id = next(
        c["id"]
        for c in diff["candidates"]
        if c["file"] == culprit.file and c["header"] == culprit.hunk
    )
    variants = {"bad": [], "culprit reverted": ["--revert", culprit_id]}

    stop = threading.Event()
    threading.Thread(target=cpu_steal, args=(args.out / "steal.txt", stop), daemon=True).start()
    smi = None
    if shutil.which("nvidia-smi"):
        smi = subprocess.Popen(
            [
                "nvidia-smi",
                "--query-gpu=timestamp,clocks.sm,utilization.gpu,power.draw",
                "--format=csv,noheader,nounits",
                "-lms",
                "250",
            ],
            stdout=(args.out / "smi.csv").open("w"),
        )
    rows = []
    try:
        for round_no in range(args.rounds):
            for name, extra in variants.items():
                start = time.time()
                done = subprocess.run(
                    [sys.executable, "-m", "agent", "experiment", "--json", *extra],
                    cwd=lab,
                    env=env,
                    capture_output=True,
                    text=True,
                )
                end = time.time()
                if done.returncode:
                    print(f"{name}: failed: {done.stderr.strip()[-300:]}", flush=True)
                    continue
                samples = json.loads(done.stdout)["metric"]["samples"]
                rows.append(
                    {
                        "round": round_no,
                        "variant": name,
                        "start": start,
                        "end": end,
                        "median": statistics.median(samples),
                        "samples": samples,
                        "steal": window(args.out / "steal.txt", start, end, 1),
                    }
                )
                print(
                    f"{name:18} {rows[-1]['median']:7.2f} ms  requests "
                    f"{min(samples):.2f}..{max(samples):.2f}  {end - start:.0f} s",
                    flush=True,
                )
    finally:
        stop.set()
        if smi:
            smi.terminate()
    (args.out / "launches.json").write_text(json.dumps(rows, indent=1))
    summarize(rows, args.out / "smi.csv")


def smi_seconds(path: Path) -> Path:
    """nvidia-smi's timestamps as epoch seconds, so its samples share the launches' clock."""
    converted = path.with_suffix(".epoch")
    lines = []
    for line in path.read_text().splitlines() if path.exists() else []:
        stamp, *rest = [part.strip() for part in line.split(",")]
        try:
            when = time.mktime(time.strptime(stamp.split(".")[0], "%Y/%m/%d %H:%M:%S"))
        except ValueError:
            continue
        lines.append(" ".join([f"{when:.1f}", *rest]))
    converted.write_text("\n".join(lines))
    return converted


def summarize(rows: list[dict], smi: Path) -> None:
    clocks = smi_seconds(smi)
    print(f"\n{'variant':18} {'median':>7} {'SM MHz':>7} {'GPU %':>6} {'steal':>6}")
    for row in rows:
        sm, util = (window(clocks, row["start"], row["end"], i) for i in (1, 2))
        print(
            f"{row['variant']:18} {row['median']:7.2f} {sm or 0:7.0f} {util or 0:6.0f} "
            f"{100 * (row['steal'] or 0):5.1f}%"
        )
    print()
    for name in dict.fromkeys(row["variant"] for row in rows):
        medians = [row["median"] for row in rows if row["variant"] == name]
        spread = statistics.stdev(medians) if len(medians) > 1 else 0.0
        print(
            f"{name:18} launches {len(medians)}  mean {statistics.mean(medians):.2f}  "
            f"SD {spread:.2f} ({100 * spread / statistics.mean(medians):.0f} %)  "
            f"range {min(medians):.2f}..{max(medians):.2f}"
        )


if __name__ == "__main__":
    main()
