"""Real regressions in real code: for each documented one (tests/real/regressions.py), the two
releases from PyPI as a git history and `debug-agent investigate` over them must confirm the
hunk the fix release reverts."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest

from tests.conftest import run_cli
from tests.real.regressions import REGRESSIONS, build_target
from tools.repo.candidates import hunk_candidates, open_repo


@pytest.fixture(scope="module")
def release_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pip downloads, once per session of this module."""
    return tmp_path_factory.mktemp("pypi-releases")


def _hunks_adding(repo: Path, good: str, lines: tuple[tuple[str, str], ...]) -> set[str]:
    """The ids of the hunks (against `good`) that add a line holding each (file, text)."""
    _, candidates = hunk_candidates(open_repo(repo), good)
    found = set()
    for file, text in lines:
        ids = [
            c.id for c in candidates if c.file == file and any(text in a for a in c.added_lines())
        ]
        assert len(ids) == 1, f"{file}: {len(ids)} hunks add {text!r}"
        found.add(ids[0])
    return found


@pytest.mark.parametrize("case", sorted(REGRESSIONS))
def test_the_hunk_the_fix_reverts_is_confirmed(
    case: str, release_cache: Path, tmp_path: Path
) -> None:
    regression = REGRESSIONS[case]
    # a release range: both releases committed, the working tree the slow one as is
    releases = (regression.good, regression.slow, regression.slow)
    repo = build_target(case, tmp_path, release_cache, releases)
    good = f"v{regression.good}"
    expected = _hunks_adding(repo, good, regression.culprits)
    done = run_cli(
        "investigate",
        "--good",
        good,
        "--symptom",
        regression.symptom,
        "--json",
        cwd=repo,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["status"] == "confirmed", result["notes"]
    named = {c["id"] for c in result["culprits"]}
    assert (named == expected) if regression.exact else (expected <= named), result["culprits"]
    # what a maintainer acts on: the commit that brought each culprit, and its diff
    report = (Path(result["session_dir"]) / "report.md").read_text()
    subject = git.Repo(repo).head.commit.summary
    for culprit in (c for c in result["culprits"] if c["id"] in expected):
        assert culprit["commit"]["subject"] == subject and culprit["diff"].startswith("@@ ")
        assert culprit["diff"] in report.replace("\n  ", "\n")
    assert f'"{subject}"' in report


def test_a_release_history_is_searched_by_commit_first(release_cache: Path, tmp_path: Path) -> None:
    """Five sqlparse releases, one commit each: the search finds the release commit that
    brought the regression (0.4.0, not the last one), then the hunk inside it."""
    releases = ("0.2.4", "0.3.0", "0.3.1", "0.4.0", "0.4.1", "0.4.1")
    repo = build_target("sqlparse", tmp_path, release_cache, releases)
    symptom = REGRESSIONS["sqlparse"].symptom
    done = run_cli(
        "investigate", "--good", "v0.2.4", "--symptom", symptom, "--json", cwd=repo, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["status"] == "confirmed", result["notes"]
    # the regex the fix changes, in the release that brought it (on a loaded machine the
    # fast end's jitter can leave a remainder worth a search: a second cause may be named)
    assert result["bisection"]["first_bad"]["subject"] == "sqlparse 0.4.0"
    main = [c for c in result["culprits"] if "_get_insert_token" in c["diff"]]
    assert main and all(c["commit"]["subject"] == "sqlparse 0.4.0" for c in main)
    assert result["unexplained_share"] <= 0.2, result["culprits"]  # the set explains the gap
    transcript = (Path(result["session_dir"]) / "transcript.jsonl").read_text()
    assert "bisected on their own trees first" in transcript
    assert "'sqlparse 0.4.0'" in transcript  # the probe named the commit it launched
