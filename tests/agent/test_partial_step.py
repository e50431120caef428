"""A partial step that noise made: on a real git history, a harmless merge whose first three
processes read slow (as one process in five ran markdown2's tree at 21 ms where the others ran
it at 12, on a 2-core VM), bisected as part of the way; the search over the rest of the range
confirms the culprit both ways, and the first bad commit named is the one that wrote it, with
the partial step said not to be borne out."""

from __future__ import annotations

import textwrap
from pathlib import Path

import git

from tests.agent.test_first_bad_commit import CACHE, CORE_WITH_CACHE, SLOW_CACHE, _commit, _repo
from tests.tools.work_library import investigate

NOISY = "Merge pull request #2 from dev/tidy"
# the bench reads slow in the first NOISE_SLOW processes of the tree whose HEAD is NOISY
BENCH = textwrap.dedent(f"""\
    import os
    import subprocess
    import time
    from pathlib import Path

    from mylib.core import work

    head = subprocess.run(
        ["git", "log", "-1", "--format=%s"], capture_output=True, text=True
    ).stdout.strip()
    extra = 0.0
    if head == {NOISY!r}:
        count = Path(os.environ["NOISE_DIR"]) / "count"
        seen = int(count.read_text()) if count.exists() else 0
        count.write_text(str(seen + 1))
        slowed = seen < int(os.environ["NOISE_SLOW"])
        extra = float(os.environ.get("NOISE_EXTRA_S", "0.002")) if slowed else 0.0
    for _ in range(3):
        fastest = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            work()
            time.sleep(extra)
            fastest = min(fastest, time.perf_counter() - start)
        print(f"work_ms: {{fastest * 1000:.2f}}")
""")


def noisy_history(root: Path) -> str:
    """good, then on the first-parent line: main work, a tidy-up merged (#2, the noisy tree),
    the culprit's branch merged (#3; it forks from good), more main work. Returns the culprit."""
    repo = _repo(root)
    files = {"mylib/__init__.py": "", "mylib/core.py": CORE_WITH_CACHE, "bench.py": BENCH}
    _commit(repo, {**files, "mylib/cache.py": CACHE}, "v1")
    repo.create_tag("good")
    repo.git.checkout("-q", "-b", "slow", "good")
    culprit = _commit(repo, {"mylib/cache.py": SLOW_CACHE}, "Warm the cache on lookup (#3)")
    repo.git.checkout("-q", "main")
    _commit(repo, {"notes/a.md": "a\n"}, "Main work 1")
    _commit(repo, {"notes/b.md": "b\n"}, "Main work 2")
    repo.git.checkout("-q", "-b", "tidy", "main")
    _commit(repo, {"docs/tidy.md": "tidy\n"}, "Tidy the docs")
    repo.git.checkout("-q", "main")
    repo.git.merge("-q", "--no-ff", "-m", NOISY, "tidy")
    repo.git.merge("-q", "--no-ff", "-m", "Merge pull request #3 from dev/slow", "slow")
    _commit(repo, {"notes/c.md": "c\n"}, "Main work 3")
    _commit(repo, {"notes/d.md": "d\n"}, "Main work 4")
    return culprit


def investigate_with_noise(
    tmp_path: Path, repo_dir: Path, slow: int = 3, extra_s: float = 0.002
) -> dict:
    """`investigate` with the noise's counter in tmp_path, the noisy tree's first `slow`
    processes slowed by `extra_s` a call, and no profile (no hot lines: the bisection's own
    way)."""
    noise = tmp_path / "noise"
    noise.mkdir()
    toml = (repo_dir / "debug-agent.toml").read_text() + "\n[profile]\nenabled = false\n"
    env = (
        f'PYTHONPATH = ".", NOISE_DIR = "{noise}", NOISE_SLOW = "{slow}", '
        f'NOISE_EXTRA_S = "{extra_s}"'
    )
    toml = toml.replace('PYTHONPATH = "."', env)
    (repo_dir / "debug-agent.toml").write_text(toml)
    return investigate(repo_dir, "work_ms 21 (was 1)")


def past_the_noisy_merge(tmp_path: Path, slow: int, extra_s: float) -> tuple[dict, str]:
    """`investigate_with_noise` on `noisy_history`, checked to have judged the noisy merge
    good and named the culprit's commit, both first bad and culprit; (result, noisy merge)."""
    repo_dir = tmp_path / "repo"
    culprit = noisy_history(repo_dir)
    result = investigate_with_noise(tmp_path, repo_dir, slow=slow, extra_s=extra_s)

    assert result["status"] == "confirmed", result["notes"]
    noisy = git.Repo(repo_dir).git.log("--merges", "--grep", "#2", "--format=%H")
    tested = {t["sha"]: t for t in result["bisection"]["tested"]}
    assert tested[noisy]["verdict"] == "good", tested[noisy]
    assert result["bisection"]["first_bad"]["sha"] == culprit, result["bisection"]
    [hunk] = result["culprits"]
    assert hunk["commit"]["sha"] == culprit
    return result, noisy


def test_a_probe_whose_best_launch_runs_at_its_good_neighbours_level_is_good(
    tmp_path: Path,
) -> None:
    """Two slowed processes of the harmless merge read part of the way; its third runs at its
    good neighbour's level, so the step is the machine's: the bisection goes on past it and
    names the culprit's commit itself, with no search over the whole range (before, the
    culprit was found by that search, and the partial step refuted at the report)."""
    # its best launch, or its launches together, at the good level (test_probe_verdict.py)
    result, _ = past_the_noisy_merge(tmp_path, slow=2, extra_s=0.002)
    assert not [n for n in result["notes"] if "is not borne out" in n or "only part" in n]


def test_a_partial_step_the_confirmation_contradicts_gives_way_to_the_culprits_commit(
    tmp_path: Path,
) -> None:
    repo_dir = tmp_path / "repo"
    culprit = noisy_history(repo_dir)
    result = investigate_with_noise(tmp_path, repo_dir)

    assert result["status"] == "confirmed", result["notes"]
    noisy = git.Repo(repo_dir).git.log("--merges", "--grep", "#2", "--format=%H")
    tested = {t["sha"]: t for t in result["bisection"]["tested"]}
    assert tested[noisy]["verdict"] == "bad" and "part of the way" in tested[noisy]["why"]
    [hunk] = result["culprits"]
    assert hunk["file"] == "mylib/cache.py" and hunk["commit"]["sha"] == culprit
    bisection = result["bisection"]
    assert bisection["first_bad"]["sha"] == culprit, bisection
    assert bisection["parent"] == git.Repo(repo_dir).commit("good").hexsha
    [said] = [n for n in result["notes"] if "is not borne out" in n]
    assert noisy[:12] in said and culprit[:12] in said and "reproduce" in said
    report = (Path(result["session_dir"]) / "report.md").read_text()
    assert f"{culprit} is the first bad commit" in report
    rows = [t["sha"] for t in bisection["tested"]]
    assert len(rows) == len(set(rows)), rows  # each state once (the good end is the parent)


def test_where_the_culprits_parent_is_the_partial_step_the_first_bad_commit_stays_open(
    tmp_path: Path,
) -> None:
    """A straight history: the noisy commit is the culprit's parent, measured bad (part of
    the way); nothing measured tells the two apart, and the report says so."""
    repo_dir = tmp_path / "repo"
    repo = _repo(repo_dir)
    files = {"mylib/__init__.py": "", "mylib/core.py": CORE_WITH_CACHE, "bench.py": BENCH}
    _commit(repo, {**files, "mylib/cache.py": CACHE}, "v1")
    repo.create_tag("good")
    _commit(repo, {"notes/a.md": "a\n"}, "Main work 1")
    _commit(repo, {"notes/b.md": "b\n"}, "Main work 2")
    noisy = _commit(repo, {"notes/n.md": "n\n"}, NOISY)
    culprit = _commit(repo, {"mylib/cache.py": SLOW_CACHE}, "Warm the cache on lookup (#3)")
    _commit(repo, {"notes/c.md": "c\n"}, "Main work 3")
    result = investigate_with_noise(tmp_path, repo_dir)

    assert result["status"] == "confirmed", result["notes"]
    [hunk] = result["culprits"]
    assert hunk["commit"]["sha"] == culprit
    assert result["bisection"]["first_bad"]["sha"] == noisy  # as measured, and flagged:
    [said] = [n for n in result["notes"] if "is not borne out" in n]
    assert f"whose parent {noisy[:12]} measured bad" in said and "stays open" in said
