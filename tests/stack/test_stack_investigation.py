"""An upgrade of a whole stack, investigated: three packages moved (one slows the bench, one is
imported and harmless, one is never imported), every state launched in an environment built of
its own package set, each set built once; then the culprit package down to its first slow
release."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import make_repo, run_cli, sh
from tests.stack.wheels import Wheel, make_wheels
from tools.lab.stack_lab import stack_config

BENCH = """\
import time
import harmless, pairlib, slowlib

for _ in range(3):
    started = time.perf_counter()
    slowlib.work()
    harmless.work()
    print(f"latency_ms: {(time.perf_counter() - started) * 1000:.3f}")
"""


def stack_repo(tmp_path: Path) -> Path:
    wheels = tmp_path / "wheels"
    # the slowdown came with 1.2; 1.1 and 1.2 lie between the good and bad versions
    # 1.2 also changes `other`, a second hunk that costs nothing
    timings = (("1.0", 0.01, 1), ("1.1", 0.01, 1), ("1.2", 0.05, 2), ("1.3", 0.05, 2))
    specs = [Wheel("slowlib", v, code=_work(seconds, other)) for v, seconds, other in timings]
    for version in ("1.0", "1.1"):
        specs.append(Wheel("harmless", version, code=_work(0.0)))
    for version in ("1.0", "2.0"):
        specs.append(Wheel("unused", version))
        # a pair whose releases pin each other: pairdep is never imported, but moves with pairlib
        specs.append(Wheel("pairdep", version))
        specs.append(Wheel("pairlib", version, requires=f"pairdep=={version}", code=_work(0)))
    make_wheels(wheels, specs)
    repo = make_repo(tmp_path)
    (repo / "bench.py").write_text(BENCH)
    pairs = "pairlib=={0}\npairdep=={0}\n"
    (repo / "good.txt").write_text(
        "slowlib==1.0\nharmless==1.0\nunused==1.0\n" + pairs.format("1.0")
    )
    (repo / "bad.txt").write_text(
        "slowlib==1.3\nharmless==1.1\nunused==2.0\n" + pairs.format("2.0")
    )
    sh(repo, "git", "add", ".")
    sh(repo, "git", "commit", "-qm", "the service and its two package sets")
    budget = "\n[budget]\nmax_launches = 16\n"
    (repo / "debug-agent.toml").write_text(stack_config("good.txt", "bad.txt", str(wheels), budget))
    return repo


def _work(seconds: float, other: int = 1) -> str:
    """`work` sleeps `seconds`; `other`, far below it (its own hunk), returns `other`."""
    spacer = "".join(f"# {i}\n" for i in range(8))
    return (
        f"import time\n\ndef work():\n    time.sleep({seconds})\n\n{spacer}\n"
        f"def other():\n    return {other}\n"
    )


def test_the_package_that_slowed_the_stack_then_a_change_beside_it(tmp_path: Path) -> None:
    repo = stack_repo(tmp_path)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    args = ["investigate", "--symptom", "latency_ms 50 (was 10)", "--json"]
    done = run_cli(*args, cwd=repo, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["status"] == "confirmed", result["notes"]
    # inside the first slow release: the hunk that slept longer, not the one beside it
    [culprit] = result["culprits"]
    assert culprit["package"] == "slowlib 1.1 -> 1.2", culprit
    assert culprit["file"] == "slowlib/__init__.py" and "+    time.sleep(0.05)" in culprit["diff"]
    assert "return 2" not in culprit["diff"]
    releases = result["releases"]
    assert (releases["package"], releases["good"], releases["bad"]) == ("slowlib", "1.0", "1.3")
    assert (releases["before"], releases["first_slow"]) == ("1.1", "1.2"), releases
    # never imported: dropped before any launch, on the import trace of both references
    dropped = {d["candidate"]: d for d in result["dropped"]}
    assert sorted(dropped) == ["pkg-pairdep", "pkg-unused"]
    assert dropped["pkg-unused"]["reason"] == "package never loaded"
    # pairlib's releases pin pairdep: never loaded, it moves with pairlib and every state holds
    assert "carried with pkg-pairlib" in dropped["pkg-pairdep"]["evidence"][-1]
    assert not result["unresolved"], result["unresolved"]
    lines = Path(result["session_dir"], "transcript.jsonl").read_text().splitlines()
    searched = [json.loads(line).get("payload", {}).get("config", "") for line in lines]
    assert not any("pkg-unused" in label for label in searched), searched
    launches = sorted(Path(result["session_dir"], "launches").glob("*/environment.txt"))
    built = [p for p in launches if "(built in" in p.read_text()]
    sets = {tuple(x for x in p.read_text().splitlines() if "==" in x) for p in launches}
    assert len(built) == len(sets)  # each set built once, whatever its launches
    # the service changed beside the upgrade: a second investigation, over both, builds no
    # reference again (the two sets are the first one's)
    changed_service_beside_the_upgrade(repo, env)


def changed_service_beside_the_upgrade(repo: Path, env: dict[str, str]) -> None:
    """The upgrade and an uncommitted change to the service: one investigation over both, each
    named with its share, in the environments the first investigation built. The good set comes
    from `--good-env` (the config's [stack] good now names the bad set: nothing would differ)."""
    bench = (repo / "bench.py").read_text()
    (repo / "bench.py").write_text(bench.replace("    harmless.work()\n", "    time.sleep(0.05)\n"))
    config = (repo / "debug-agent.toml").read_text()
    (repo / "debug-agent.toml").write_text(config.replace('good = "good.txt"', 'good = "bad.txt"'))
    args = ["investigate", "--symptom", "latency_ms 100 (was 10)", "--json", "--max-launches", "24"]
    args += ["--good-env", str(repo / "good.txt")]
    done = run_cli(*args, cwd=repo, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["status"] == "confirmed", result["notes"]
    culprits = {c["id"]: c for c in result["culprits"]}
    [hunk] = [c for c in culprits.values() if c["file"] == "bench.py"]
    assert set(culprits) == {"pkg-slowlib", hunk["id"]}, culprits
    # 10 -> 50 ms from the package, 50 -> 100 from the hunk: each holds a real share
    assert all(0.2 < (c["share"] or 0) < 0.8 for c in culprits.values()), culprits
    transcript = Path(result["session_dir"], "transcript.jsonl").read_text()
    references = [
        line for line in transcript.splitlines() if "launched with the import trace" in line
    ]
    assert len(references) == 2 and all("cached: built before" in r for r in references)


def test_a_bad_set_that_does_not_hold_together_ends_in_error_with_a_report(
    tmp_path: Path,
) -> None:
    """Its pins break each other (pairlib 2.0 needs pairdep 2.0): the bad reference cannot be
    built, which is said, with uv's reason, and a report; never a traceback."""
    repo = stack_repo(tmp_path)
    bad = (repo / "bad.txt").read_text()
    (repo / "bad.txt").write_text(bad.replace("pairdep==2.0", "pairdep==1.0"))
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    args = ["investigate", "--symptom", "latency_ms 50 (was 10)", "--json"]
    done = run_cli(*args, cwd=repo, env=env, timeout=600)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["status"] == "error" and result["launches"] == 1
    report = Path(result["session_dir"], "report.md").read_text()
    assert "package set did not build or does not hold together" in done.stderr
    assert "`pairlib` requires `pairdep==2.0`" in report, report
