"""Which commit brought a hunk, in a real git history with commits, a merge and uncommitted
changes."""

from __future__ import annotations

from pathlib import Path

import git

from tests.conftest import make_repo, sh
from tools.repo.candidates import Candidate, hunk_candidates
from tools.repo.commit_of import commits_of

FILLER = "".join(f"# filler {i}\n" for i in range(8))  # keeps the hunks apart
GOOD = f"def fast():\n    return 1\n{FILLER}LIMIT = 10\n{FILLER}OLD = 1\n{FILLER}MOVED = 2\n"


def _commit(repo: Path, text: str, subject: str, author: str = "Ann Dev <ann@example.invalid>"):
    (repo / "m.py").write_text(text)
    sh(repo, "git", "commit", "-qam", subject, f"--author={author}")


def _hunk(candidates: list[Candidate], text: str) -> Candidate:
    return next(c for c in candidates if text in c.patch)


def test_each_hunk_names_the_commits_that_brought_its_lines(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"m.py": GOOD})
    slow = GOOD.replace("return 1", "return sum(range(10**6)) and 1")
    _commit(repo, slow, "Make fast() thorough (#123)")
    dropped = slow.replace("OLD = 1\n", "")
    _commit(repo, dropped, "Drop OLD", "Bob Ops <bob@example.invalid>")
    sh(repo, "git", "checkout", "-qb", "side")
    _commit(repo, dropped.replace("LIMIT = 10", "LIMIT = 20"), "Raise the limit")
    sh(repo, "git", "checkout", "-q", "main")
    sh(repo, "git", "merge", "-q", "--no-ff", "side", "-m", "Merge pull request #77 from x/side")
    # uncommitted: a line of its own, and one more beside the committed change
    (repo / "m.py").write_text(
        dropped.replace("LIMIT = 10", "LIMIT = 20").replace("MOVED = 2", "MOVED = 3")
    )
    r = git.Repo(repo)
    good_sha, candidates = hunk_candidates(r, "good")

    thorough = commits_of(r, good_sha, _hunk(candidates, "range(10**6)"))
    assert [(c.subject, c.pr, c.author, c.lines) for c in thorough] == [
        ("Make fast() thorough (#123)", 123, "Ann Dev <ann@example.invalid>", 2)
    ]
    assert thorough[0].date.endswith("+00:00") and len(thorough[0].sha) == 40

    removed = commits_of(r, good_sha, _hunk(candidates, "-OLD = 1"))
    assert [(c.subject, c.author) for c in removed] == [
        ("Drop OLD", "Bob Ops <bob@example.invalid>")
    ]
    # a merged branch's commit is the one that wrote the line, not the merge
    limit = commits_of(r, good_sha, _hunk(candidates, "LIMIT = 20"))
    assert [c.subject for c in limit] == ["Raise the limit"]
    assert commits_of(r, good_sha, _hunk(candidates, "MOVED = 3")) == []  # not committed


def test_a_line_older_than_good_and_a_file_git_does_not_track_name_no_commit(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path, {"m.py": GOOD})
    (repo / "new.py").write_text("x = 1\n")  # untracked
    (repo / "m.py").write_text(GOOD.replace("MOVED = 2\n", "") + "MOVED = 2\n# end\n")
    r = git.Repo(repo)
    good_sha, candidates = hunk_candidates(r, "good")
    assert commits_of(r, good_sha, _hunk(candidates, "x = 1")) == []
    assert all(commits_of(r, good_sha, c) == [] for c in candidates)
