"""The numbers docs/real-runs.md records, read from a finished session folder.

python tests/real_runs/summary.py SESSION_DIR  ->  JSON: verdict, culprits, launches against
git bisect on the same candidates, the launch-to-launch noise, wall time.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agent.bench.lab import bisect_launches
from agent.levels import noise
from agent.state import InvestigationState


def summary(session: Path) -> dict:
    result = json.loads((session / "result.json").read_text())
    state = InvestigationState.model_validate(json.loads((session / "state.json").read_text()))
    events = [
        json.loads(line) for line in (session / "transcript.jsonl").read_text().splitlines()[1:]
    ]
    sigma = noise(state)
    good = state.configs[state.good_key].mean
    return {
        "status": result["status"],
        "culprits": [{k: c.get(k) for k in ("id", "file", "share")} for c in result["culprits"]],
        "dropped": [
            {"file": d.get("file"), "evidence": d.get("evidence")} for d in result["dropped"]
        ],
        "metric": result["metric"],
        "launches": result["launches"],
        "candidates": len(state.candidates),
        "git_bisect_launches": bisect_launches(len(state.candidates)),
        "noise": {
            "sigma": round(sigma.sigma, 4),
            "df": sigma.df,
            "cv_of_good": round(sigma.sigma / good, 4) if good else None,
        },
        "launch_values": {
            c.label: [round(v, 3) for v in c.values] for c in state.configs.values() if c.values
        },
        "wall_s": round(events[-1]["ts"] - events[0]["ts"], 1),
    }


if __name__ == "__main__":
    print(json.dumps(summary(Path(sys.argv[1])), indent=2))
