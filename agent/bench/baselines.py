"""What the classic methods would spend on the same candidates, noise-free: git bisect over
the hunks in diff order, Zeller's ddmin, and, on a commit range, `git bisect run` over the
commits (skipping those that do not start) followed by ddmin inside each culprit commit."""

from __future__ import annotations

import math
import os
import subprocess
import tempfile
from pathlib import Path

import git

from tools.lab.truth import RangeTruth


def bisect_launches(n: int) -> int:
    """git bisect over n candidates in diff order with a noise-free oracle, plus its two ends."""
    return 2 + (math.ceil(math.log2(n)) if n > 1 else 0)


def ddmin_launches(n: int, culprits: set[int], together: bool) -> int:
    """Distinct tests of Zeller's ddmin (noise-free) over n changes, plus the two ends.

    The test fails when the culprits are present: all of them (an interacting pair) or any.
    """
    if not culprits:
        return 2
    seen: dict[frozenset, bool] = {}

    def fails(subset: frozenset) -> bool:
        if subset not in seen:
            seen[subset] = culprits <= subset if together else bool(culprits & subset)
        return seen[subset]

    changes, granularity = list(range(n)), 2
    while len(changes) >= 2:
        size = math.ceil(len(changes) / granularity)
        parts = [changes[i : i + size] for i in range(0, len(changes), size)]
        for part in parts:
            if fails(frozenset(part)):
                changes, granularity = part, 2
                break
        else:
            for part in parts:
                rest = [c for c in changes if c not in part]
                if fails(frozenset(rest)):
                    changes, granularity = rest, max(granularity - 1, 2)
                    break
            else:
                if granularity >= len(changes):
                    break
                granularity = min(len(changes), granularity * 2)
    return len(seen) + 2


# git bisect run's script: the commit's subject is its position in the range
_ORACLE = """k=$(git log -1 --format=%s); echo "$k" >> "$PROBES"
case " $BROKEN " in *" $k "*) exit 125;; esac
[ "$k" -ge "$FIRST_BAD" ] && exit 1 || exit 0
"""


def bisect_probes(commits: int, first_bad: int, broken: set[int], low: int = 0) -> int:
    """Launches of a real, noise-free `git bisect run` between commit `low` (good) and commit
    `commits` (bad) of a linear history whose first bad commit is `first_bad`; a commit in
    `broken` does not start (the script exits 125: git bisect skip, still a launch). git picks
    its probes by the graph alone, so a linear history of empty commits stands for any."""
    if commits - low <= 1:  # bad right after good: git names it without a probe
        return 0
    with tempfile.TemporaryDirectory(prefix="debug-agent-bisect-") as tmp:
        repo = git.Repo.init(tmp)
        actor = git.Actor("bench", "bench@debug-agent.invalid")
        shas = [
            repo.index.commit(str(k), author=actor, committer=actor).hexsha
            for k in range(commits + 1)
        ]
        probes = Path(tmp) / ".git" / "probes"
        env = {"PROBES": str(probes), "FIRST_BAD": str(first_bad)}
        env["BROKEN"] = " ".join(map(str, sorted(broken)))
        subprocess.run(
            ["git", "bisect", "start", shas[commits], shas[low]], cwd=tmp, capture_output=True
        )
        # exits non-zero when only skipped commits are left: the probes made still count
        subprocess.run(
            ["git", "bisect", "run", "sh", "-c", _ORACLE],
            cwd=tmp,
            capture_output=True,
            env={**os.environ, **env},
        )
        return len(probes.read_text().split()) if probes.exists() else 0


def range_baseline(truth: RangeTruth) -> int:
    """git bisect to each culprit commit (the second from the first one on), plus ddmin over
    each culprit commit's own hunks; the two ends counted once."""
    broken, launches, low = set(truth.broken_positions), 2, 0
    for position in sorted(truth.culprit_positions):
        launches += bisect_probes(truth.commits, position, broken, low)
        hunks = truth.hunks_in.get(position, 1)
        culprits = set(truth.culprit_hunks_in.get(position, []))
        launches += ddmin_launches(hunks, culprits, truth.together) - 2
        low = position
    return launches
