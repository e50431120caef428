"""The good ref in any of git's revision forms, and one line for what names no commit."""

from __future__ import annotations

import re
from pathlib import Path

import git
import pytest

from tests.conftest import make_repo, sh
from tools.repo.worktree import GitError, resolve_ref


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> git.Repo:
    path = make_repo(tmp_path_factory.mktemp("refs"))
    (path / "b.py").write_text("x = 2\n")
    sh(path, "git", "commit", "-qam", "second")
    sh(path, "git", "tag", "-a", "v2", "-m", "an annotated tag")
    return git.Repo(path)


@pytest.mark.parametrize("ref", ["good", "HEAD~1", ":/good", "main^{/good}", "main~1^{commit}"])
def test_forms_that_name_the_first_commit(repo: git.Repo, ref: str) -> None:
    assert resolve_ref(repo, ref) == repo.commit("HEAD~1").hexsha


def test_an_annotated_tag_is_its_commit(repo: git.Repo) -> None:
    assert resolve_ref(repo, "v2") == repo.head.commit.hexsha


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("HEAD^{tree}", "'HEAD^{tree}' names a tree, not a commit"),
        ("HEAD:b.py", "'HEAD:b.py' names a blob, not a commit"),
        ("HEAD~9", "unknown git ref 'HEAD~9'"),
        ("--output=out.txt", "unknown git ref '--output=out.txt'"),  # no option, no file
    ],
)
def test_what_names_no_commit_is_one_line(repo: git.Repo, ref: str, message: str) -> None:
    with pytest.raises(GitError, match=re.escape(message)):
        resolve_ref(repo, ref)
    assert not Path(repo.working_tree_dir or "", "out.txt").exists()
