"""The bad state is the user's tree, byte for byte: on a real repository with a binary data file
the code reads, symlinks, a mode change, a file turned symlink, a submodule, names git quotes, a
user folder named `sessions/` and untracked files, the candidates plus what is carried rebuild
the working tree exactly, and each candidate applies alone to good and reverts alone from bad."""

from __future__ import annotations

import os
from pathlib import Path

import git
import pytest

from tests.conftest import make_repo, sh
from tools.repo.candidates import CandidateSet, own_paths, tree_changes
from tools.repo.tree_check import check_tree
from tools.repo.worktree import open_repo, scratch_worktree

QUOTED = ["sp ace.py", "é.py", "new\nline.py", 'quo"te.py']
DATA_GOOD = b"\0\1" * 512  # NUL bytes: git calls it binary
DATA_BAD = DATA_GOOD * 2  # twice the data: the code that reads it takes twice as long


def _good(tmp: Path) -> Path:
    (tmp / "upstream").mkdir()
    sub = make_repo(tmp / "upstream")  # the submodule's own repository: two commits
    sh(sub, "git", "commit", "-q", "--allow-empty", "-m", "second")
    files = {
        "code.py": "data = open('data.bin', 'rb').read()\n",
        "tool.sh": "echo one\n",
        "conf.py": "x = 1\n",
        **{name: "x = 1\n" for name in QUOTED},
    }
    repo = make_repo(tmp, files)
    (repo / "sessions").mkdir()  # the user's own folder of that name
    (repo / "sessions/notes.py").write_text("n = 1\n")
    (repo / "data.bin").write_bytes(DATA_GOOD)
    (repo / "old.bin").write_bytes(b"\0old")
    os.symlink("code.py", repo / "link")
    os.symlink("gone.py", repo / "dead")
    add = ["git", "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub)]
    sh(repo, *add, "lib/sub")
    sh(repo / "lib/sub", "git", "checkout", "-q", "HEAD~1")
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-qm", "good, with data")
    sh(repo, "git", "tag", "-f", "good")
    return repo


def _make_bad(repo: Path) -> None:
    (repo / "data.bin").write_bytes(DATA_BAD)
    sh(repo, "git", "commit", "-qam", "more data")  # committed after good
    (repo / "old.bin").unlink()
    (repo / "new.bin").write_bytes(b"\0new")
    (repo / "link").unlink()
    os.symlink("tool.sh", repo / "link")
    (repo / "dead").unlink()
    os.symlink("code.py", repo / "newlink")
    os.symlink("sessions", repo / "dirlink")  # to a folder: git stores the link, not the folder
    (repo / "conf.py").unlink()
    os.symlink("code.py", repo / "conf.py")  # a file turned symlink
    (repo / "tool.sh").write_text("echo two\n")
    (repo / "tool.sh").chmod(0o755)
    (repo / "sessions/notes.py").write_text("n = 2\n")
    (repo / "empty.txt").touch()
    for name in QUOTED:
        (repo / name).write_text("x = 2\n")
    (repo / "new é\nfile.py").write_text("y = 1\n")
    sh(repo / "lib/sub", "git", "checkout", "-q", "main")
    (repo / "debug-agent.toml").write_text("[target]\n")  # debug-agent's own: left out
    (repo / ".runs" / "s1").mkdir(parents=True)  # debug-agent's sessions folder, here inside
    (repo / ".runs" / "s1" / "transcript.jsonl").write_text("{}\n")


@pytest.fixture(scope="module")
def bad_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CandidateSet, list[str]]:
    repo = _good(tmp_path_factory.mktemp("tree"))
    _make_bad(repo)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("DEBUG_AGENT_SESSIONS_DIR", str(repo / ".runs"))
        own = own_paths(repo)
    return repo, tree_changes(open_repo(repo), "good", own), own


def test_candidates_and_carried_rebuild_the_working_tree(
    bad_tree: tuple[Path, CandidateSet, list[str]],
) -> None:
    repo, cands, own = bad_tree
    assert own == [".runs", "debug-agent.toml"]
    files = {c.file for c in cands.candidates}
    assert files == {
        "data.bin", "old.bin", "new.bin", "link", "dead", "newlink", "dirlink", "conf.py",
        "tool.sh", "sessions/notes.py", "empty.txt", "new é\nfile.py", *QUOTED,
    }  # fmt: skip
    by_file = {c.file: c for c in cands.candidates}
    assert by_file["data.bin"].header == "binary"
    assert by_file["data.bin"].origin == "committed after good"
    assert by_file["new.bin"].origin == "untracked"
    assert [c.header for c in cands.candidates if c.file == "tool.sh"][0] == "mode 100644 -> 100755"
    assert by_file["conf.py"].header == "deleted file mode 100644; new file mode 120000"
    assert len(cands.carried) == 1 and cands.carried[0].startswith("lib/sub: submodule pointer ")
    check = check_tree(repo, cands, own)
    assert check.ok, check.reason
    assert check.rebuilt == check.working_tree and check.differ == []
    assert check.left_out == own


def _state(tree: Path, path: str) -> tuple[str, bytes, int] | None:
    """What a path is in a tree: a symlink's target, a file's bytes and executable bit."""
    full = tree / path
    if full.is_symlink():
        return "link", os.readlink(full).encode(), 0
    if not full.exists():
        return None
    return "file", full.read_bytes(), full.stat().st_mode & 0o111


def test_each_candidate_applies_alone_to_good_and_reverts_alone_from_bad(
    bad_tree: tuple[Path, CandidateSet, list[str]],
) -> None:
    repo, cands, _ = bad_tree
    hunks = [c for c in cands.candidates if c.kind == "hunk"]
    with scratch_worktree(repo, cands.good_sha, []) as good:
        was = {c.file: _state(good, c.file or "") for c in hunks}
    for c in hunks:
        path = c.file or ""
        alone = [h for h in hunks if h.file == path] == [c]  # the file's only change
        with scratch_worktree(repo, cands.good_sha, [c.patch]) as tree:
            assert not alone or _state(tree, path) == _state(repo, path), c.id
        others = [h.patch for h in hunks if h is not c] + [cands.carried_patch]
        with scratch_worktree(repo, cands.good_sha, others) as tree:
            assert not alone or _state(tree, path) == was[path], c.id
            gitlink = git.Git(tree).ls_files("-s", "lib/sub").split()[1]
            assert gitlink == sh(repo / "lib/sub", "git", "rev-parse", "HEAD").strip()


def test_a_change_no_candidate_holds_is_named(
    bad_tree: tuple[Path, CandidateSet, list[str]],
) -> None:
    repo, cands, own = bad_tree
    kept = [c for c in cands.candidates if c.file != "data.bin"]
    check = check_tree(repo, cands.model_copy(update={"candidates": kept}), own)
    assert not check.ok and check.differ == ["M\tdata.bin"]
    assert check.reason.endswith("differ in 1 path(s): M\tdata.bin")
    clash = [*cands.candidates, *(c for c in cands.candidates if c.file == "data.bin")]
    check = check_tree(repo, cands.model_copy(update={"candidates": clash}), own)
    assert not check.ok and check.rebuilt is None
    assert check.reason.startswith("the candidates cannot rebuild the working tree: ")


def test_a_node_tree_read_through_its_mirror_keeps_every_change(
    bad_tree: tuple[Path, CandidateSet, list[str]], tmp_path: Path
) -> None:
    """A target on a node is read through a local mirror: the good commit plus the node's patch
    (remote_helper's `state`); the mirror lists the same candidates and carries the same pointer."""
    from tools.node.remote_helper import state
    from tools.repo.target import apply_node_patch

    repo, cands, own = bad_tree
    node = state(str(repo), "good")
    mirror = tmp_path / "mirror"
    sh(tmp_path, "git", "clone", "-q", "--no-checkout", str(repo), str(mirror))
    sh(mirror, "git", "checkout", "-q", "--detach", node["sha"])
    apply_node_patch(open_repo(mirror), node["patch"], tmp_path / "node.patch")
    mirrored = tree_changes(open_repo(mirror), node["sha"], own)
    assert sorted(c.id for c in mirrored.candidates) == sorted(c.id for c in cands.candidates)
    assert mirrored.carried == cands.carried
    assert check_tree(mirror, mirrored, own).ok


def test_a_binary_too_big_for_a_patch_is_named_and_the_check_fails_on_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An honest tree the candidates cannot rebuild: a binary file too big to carry in a patch
    (a checkpoint nobody ignored) is named, and the tree check points at it."""
    import tools.repo.candidates as candidates

    monkeypatch.setattr(candidates, "BIG_BINARY", 1000)
    repo = make_repo(tmp_path)
    (repo / "weights.bin").write_bytes(b"\0" * 2000)
    found = candidates.tree_changes(open_repo(repo), "good")
    assert found.candidates == []
    assert found.carried == [
        "weights.bin: a binary file of 2,000 bytes, too big to travel in a patch: in no state "
        "(commit it, or ignore it if the server never reads it)"
    ]
    check = check_tree(repo, found, ["debug-agent.toml"])
    assert not check.ok and check.differ == ["A\tweights.bin"]


def test_a_text_change_too_big_for_a_patch_is_named_as_a_binary_one_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 20 MB data literal in a new .py file was one hunk: copied into every state and
    checkpoint, it took the seed lab's run from 7 s to 3 minutes and 2.8 GB. Past the bound a
    text change is named like a binary one, and the check stops the run on it at once."""
    import tools.repo.candidates as candidates

    monkeypatch.setattr(candidates, "BIG_BINARY", 1000)
    repo = make_repo(tmp_path)
    (repo / "table.py").write_text("X = '" + "a" * 2000 + "'\n")
    (repo / "b.py").write_text("x = 2\n")
    found = candidates.tree_changes(open_repo(repo), "good")
    assert [c.file for c in found.candidates] == ["b.py"]
    (note,) = found.carried
    assert note.startswith("table.py: a change of ") and "too big to travel in a patch" in note
    check = check_tree(repo, found, ["debug-agent.toml"])
    assert not check.ok and check.differ == ["A\ttable.py"]


def test_changes_git_hides_are_candidates_and_a_sparse_checkouts_absence_is_not(
    tmp_path: Path,
) -> None:
    """A modified file marked assume-unchanged (or skip-worktree, there on disk) was left out of
    the bad state: the run measured "no regression" where the working tree had one. A file a
    sparse checkout leaves off the disk (skip-worktree) is no deletion."""
    repo = make_repo(tmp_path, {"slow.py": "x = 1\n", "cfg.py": "y = 1\n", "far.py": "z = 1\n"})
    (repo / "slow.py").write_text("x = 2\n")
    (repo / "cfg.py").write_text("y = 2\n")
    (repo / "far.py").unlink()
    sh(repo, "git", "update-index", "--assume-unchanged", "slow.py")
    sh(repo, "git", "update-index", "--skip-worktree", "cfg.py", "far.py")
    flags = sh(repo, "git", "ls-files", "-v")
    assert sh(repo, "git", "status", "--porcelain") == ""  # git shows nothing

    found = tree_changes(open_repo(repo), "good", own_paths(repo))
    assert sorted((c.file, c.origin) for c in found.candidates) == [
        ("cfg.py", "uncommitted"),
        ("slow.py", "uncommitted"),
    ]
    assert check_tree(repo, found, own_paths(repo)).ok
    from tools.node.remote_helper import state  # a node's tree: read by its helper, alike

    patch = state(str(repo), "good")["patch"]
    assert "+x = 2" in patch and "+y = 2" in patch and "far.py" not in patch
    assert sh(repo, "git", "ls-files", "-v") == flags  # the user's index keeps its marks
