"""A real regression over its project's real git history, beside `git bisect run` on the same
range, for docs/real-runs.md (CI reaches only the package index, so this runs by hand).

    python -m tests.real.history CASE REPOSITORY FOLDER GOOD BAD

clones REPOSITORY (a path or URL holding the project's history) into FOLDER/CASE, checks out
BAD on a branch, writes the case's debug-agent.toml (tests/real/regressions.py) and runs
`debug-agent investigate --good GOOD`; then runs tests/real/bisect_releases.py's `git bisect
run` between GOOD and BAD with the same bench. It prints one JSON object with both."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import sh
from tests.real.bisect_releases import bisect_run
from tests.real.regressions import REGRESSIONS, config_text, dependencies
from tests.real.releases import DownloadError


def investigate(case: str, repo: Path, good: str) -> dict:
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "agent", "investigate", "--good", good, "--json"]
        + ["--symptom", REGRESSIONS[case].symptom],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    wall = round(time.monotonic() - start, 1)
    if not done.stdout.strip():
        return {"wall_s": wall, "error": done.stderr.strip()[-500:]}
    result = json.loads(done.stdout)
    return {
        "wall_s": wall,
        "status": result["status"],
        "launches": result["launches"],
        "unresolved": len(result["unresolved"]),
        "culprits": [
            {
                "id": c["id"],
                "summary": c.get("summary"),
                "commit": (c.get("commit") or {}).get("sha", "")[:10],
                "subject": (c.get("commit") or {}).get("subject"),
            }
            for c in result["culprits"]
        ],
        "notes": result["notes"],
        "session_dir": result["session_dir"],
    }


def history(case: str, source: str, folder: Path, good: str, bad: str) -> dict:
    repo = folder / case
    sh(folder, "git", "clone", "-q", source, str(repo))
    sh(repo, "git", "checkout", "-q", "-B", "investigate", bad)
    extra = dependencies(case, folder, folder / "cache")
    (repo / "debug-agent.toml").write_text(config_text(case, extra))
    commits = sh(repo, "git", "rev-list", "--first-parent", "--count", f"{good}..{bad}").strip()
    found = investigate(case, repo, good)
    (repo / "debug-agent.toml").unlink()
    return {
        "range": f"{good}..{bad}",
        "first_parent_commits": int(commits),
        "debug_agent": found,
        "git_bisect": bisect_run(case, repo, good, bad, extra, folder),
    }


def main(argv: list[str]) -> int:
    if len(argv) != 5 or argv[0] not in REGRESSIONS:
        print(
            f"usage: history {{{','.join(REGRESSIONS)}}} REPOSITORY FOLDER GOOD BAD",
            file=sys.stderr,
        )
        return 2
    case, source, folder, good, bad = argv
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        print(json.dumps(history(case, source, Path(folder), good, bad), indent=1))
    except (DownloadError, RuntimeError, OSError, subprocess.CalledProcessError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
