"""Which first-parent commit each hunk belongs to, in a real git history: commits, a merge (one
group), a later commit that rewrote an earlier one's line, uncommitted and untracked files."""

from __future__ import annotations

from pathlib import Path

import git

from agent.phases.commit_split import commit_split, describe, place
from agent.state import InvestigationState
from tests.conftest import make_repo, sh
from tools.repo.candidates import Candidate, hunk_candidates
from tools.repo.commit_groups import commit_groups

FILLER = "".join(f"# filler line {i}\n" for i in range(8))  # keeps the hunks apart
GOOD = f"def fast():\n    return 1\n{FILLER}LIMIT = 10\n{FILLER}OLD_NAME = 1\n{FILLER}TAIL = 2\n"


def _commit(repo: Path, text: str, subject: str) -> str:
    (repo / "m.py").write_text(text)
    sh(repo, "git", "commit", "-qam", subject)
    return git.Repo(repo).head.commit.hexsha


def _hunk(candidates: list[Candidate], text: str) -> Candidate:
    return next(c for c in candidates if text in c.patch)


def _history(tmp_path: Path) -> tuple[git.Repo, str, list[Candidate]]:
    repo = make_repo(tmp_path, {"m.py": GOOD})
    slow = GOOD.replace("return 1", "return sum(range(10**6)) and 1")
    _commit(repo, slow, "Make fast() thorough (#123)")
    dropped = slow.replace("OLD_NAME = 1\n", "")
    _commit(repo, dropped, "Drop OLD_NAME")
    # a later commit rewrites the first commit's line: the hunk is the later commit's
    rewritten = dropped.replace("sum(range(10**6))", "sum(range(10**7))")
    _commit(repo, rewritten, "Even more thorough")
    sh(repo, "git", "checkout", "-qb", "side")
    _commit(repo, rewritten.replace("LIMIT = 10", "LIMIT = 20"), "Raise the limit")
    sh(repo, "git", "checkout", "-q", "main")
    sh(repo, "git", "merge", "-q", "--no-ff", "side", "-m", "Merge pull request #77 from x/side")
    (repo / "m.py").write_text(
        rewritten.replace("LIMIT = 10", "LIMIT = 20").replace("TAIL = 2", "TAIL = 3")
    )
    (repo / "new_module.py").write_text("X = 1\n")
    r = git.Repo(repo)
    good_sha, candidates = hunk_candidates(r, "good")
    return r, good_sha, candidates


def test_hunks_are_grouped_by_first_parent_commit(tmp_path: Path) -> None:
    r, good_sha, candidates = _history(tmp_path)
    groups = commit_groups(r, good_sha, candidates)

    assert [c.subject for c in groups.commits] == [
        "Make fast() thorough (#123)",
        "Drop OLD_NAME",
        "Even more thorough",
        "Merge pull request #77 from x/side",  # the side branch's commit is not its own group
    ]
    assert all(len(c.sha) == 40 for c in groups.commits)
    of = {
        name: groups.of[_hunk(candidates, text).id]
        for name, text in [
            ("thorough", "range(10**7)"),
            ("dropped", "-OLD_NAME = 1"),
            ("limit", "+LIMIT = 20"),
            ("tail", "+TAIL = 3"),
            ("untracked", "X = 1"),
        ]
    }
    assert of == {"thorough": 2, "dropped": 1, "limit": 3, "tail": 4, "untracked": 4}
    assert groups.uncommitted == 4
    assert groups.label(4) == "the uncommitted changes"
    assert groups.label(1).endswith("'Drop OLD_NAME'")


def test_no_commit_level_without_commits_or_with_a_bad_range(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"m.py": GOOD})
    (repo / "m.py").write_text(GOOD.replace("LIMIT = 10", "LIMIT = 11"))
    r = git.Repo(repo)
    good_sha, candidates = hunk_candidates(r, "good")
    assert commit_groups(r, good_sha, candidates).commits == []
    assert commit_groups(r, "0" * 40, candidates).commits == []  # git cannot list it


def test_commit_split_probes_trees_that_existed(tmp_path: Path) -> None:
    """The later half of the commits (by prior mass) comes first, and reverting it leaves a
    prefix of the history: every probe is a tree git bisect could have checked out."""
    r, good_sha, candidates = _history(tmp_path)
    state = InvestigationState.model_construct(commits=commit_groups(r, good_sha, candidates))
    ids = [c.id for c in candidates if c.id in state.commits.of]
    weight = dict.fromkeys(ids, 1.0)
    while (halves := commit_split(state, [[cid] for cid in ids], weight)) is not None:
        later, earlier = halves
        assert min(place(state, c) for c in later) > max(place(state, c) for c in earlier)
        assert sorted(later + earlier) == sorted(ids)
        assert describe(state, ids).startswith(f"{len({place(state, c) for c in ids})} commits")
        ids = later  # go on down the latest commits, as the search does when they are guilty
    assert len({place(state, c) for c in ids}) == 1
    assert describe(state, ids) == "the uncommitted changes"


def test_a_group_that_spans_commits_moves_with_its_earliest(tmp_path: Path) -> None:
    """Hunks that must move together (a deleted module and a hunk that merged its import's
    removal with a later commit's lines) are never torn apart by a commit-level probe."""
    r, good_sha, candidates = _history(tmp_path)
    state = InvestigationState.model_construct(commits=commit_groups(r, good_sha, candidates))
    thorough, dropped = _hunk(candidates, "range(10**7)").id, _hunk(candidates, "-OLD_NAME").id
    tail, limit = _hunk(candidates, "+TAIL = 3").id, _hunk(candidates, "+LIMIT = 20").id
    weight = dict.fromkeys([thorough, dropped, tail, limit], 1.0)
    later, earlier = commit_split(state, [[dropped, tail], [thorough], [limit]], weight) or ([], [])
    assert sorted(earlier) == sorted([dropped, tail])  # at commit 1, with the uncommitted line
    assert sorted(later) == sorted([thorough, limit])
