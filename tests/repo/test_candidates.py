"""Candidates from real git repositories: hunks with stable ids, env and arg differences."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import make_repo, run_cli, sh
from tools.config import TargetConfig
from tools.errors import ToolError
from tools.repo.candidates import hunk_candidates, open_repo
from tools.repo.config_candidates import config_candidates


def test_seed_lab_diff_json_lists_the_story(seed_lab: Path) -> None:
    done = run_cli("diff", "--json", cwd=seed_lab)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["good"] == "HEAD"
    files = sorted(c["file"] for c in out["candidates"])
    assert files == sorted(
        [
            "python/sglang/srt/distributed/parallel_state.py",
            "python/sglang/srt/entrypoints/engine.py",
            "python/sglang/srt/layers/attention/flashinfer_mla_backend.py",
            "python/sglang/srt/managers/scheduler.py",
            "python/sglang/srt/server_args.py",
            "python/sitecustomize.py",
        ]
    )
    for c in out["candidates"]:
        assert c["kind"] == "hunk" and c["header"].startswith("@@ -")
        assert c["added"] >= 1 and c["id"]
    again = json.loads(run_cli("diff", "--json", cwd=seed_lab).stdout)
    assert [c["id"] for c in again["candidates"]] == [c["id"] for c in out["candidates"]]


def test_committed_uncommitted_and_untracked_changes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    text = (repo / "a.py").read_text().replace("line 3\n", "line three\n")
    (repo / "a.py").write_text(text)
    sh(repo, "git", "commit", "-qam", "after good")
    (repo / "a.py").write_text(text.replace("line 30\n", "line thirty\n"))
    (repo / "new.py").write_text("print('new')\n")
    _, cands = hunk_candidates(open_repo(repo), "good")
    by_origin = {c.origin: c for c in cands}
    assert set(by_origin) == {"committed after good", "uncommitted", "untracked"}
    assert by_origin["untracked"].file == "new.py"
    assert all(c.patch.startswith("diff --git ") for c in cands)


def test_hunk_ids_survive_other_hunks_changing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    base = (repo / "a.py").read_text()
    (repo / "a.py").write_text(base.replace("line 30\n", "line thirty\n"))
    _, first = hunk_candidates(open_repo(repo), "HEAD")
    (repo / "a.py").write_text(
        base.replace("line 30\n", "line thirty\n").replace("line 2\n", "line two\n")
    )
    _, second = hunk_candidates(open_repo(repo), "HEAD")
    assert len(first) == 1 and len(second) == 2
    assert first[0].id in {c.id for c in second}


def test_env_and_arg_differences_are_candidates() -> None:
    config = TargetConfig.model_validate(
        {
            "launch": {
                "command": "srv --tp 8 --attention-backend flashinfer --port {port}",
                "env": {"NCCL_PROTO": "Simple", "PYTHONPATH": "python"},
            },
            "baseline": {
                "command": "srv --tp 8 --port {port} --disable-cuda-graph",
                "env": {"PYTHONPATH": "python"},
            },
        }
    )
    found = {c.id: c for c in config_candidates(config)}
    assert set(found) == {"env-NCCL_PROTO", "arg-attention-backend", "arg-disable-cuda-graph"}
    assert (found["env-NCCL_PROTO"].good, found["env-NCCL_PROTO"].bad) == (None, "Simple")
    assert found["arg-attention-backend"].bad == "flashinfer"
    assert (found["arg-disable-cuda-graph"].good, found["arg-disable-cuda-graph"].bad) == ("", None)


def test_unknown_and_ambiguous_ids(seed_lab: Path) -> None:
    from tools.config import load_config
    from tools.repo.candidates import list_candidates

    cands = list_candidates(seed_lab, load_config(seed_lab))
    with pytest.raises(ToolError, match="unknown candidate id 'nope'"):
        cands.by_id(["nope"])
    assert (cands.by_id(["parallel_state"])[0].file or "").endswith("parallel_state.py")
    with pytest.raises(ToolError, match="ambiguous"):
        cands.by_id(["s"])  # scheduler-…, server_args-…, sitecustomize-…


QUOTED_NAMES = ["sp ace.py", "é.py", "new\nline.py", "tab\tx.py", 'quo"te.py', "back\\slash.py"]


def test_names_git_quotes_are_read_and_apply_one_by_one_and_together(tmp_path: Path) -> None:
    from tools.repo.worktree import scratch_worktree

    repo = make_repo(tmp_path, {name: "x = 1\n" for name in QUOTED_NAMES})
    for name in QUOTED_NAMES:
        (repo / name).write_text("x = 2\n")
    (repo / "new é file.py").write_text("y = 1\n")  # untracked
    _, hunks = hunk_candidates(open_repo(repo), "good")
    assert sorted(c.file or "" for c in hunks) == sorted([*QUOTED_NAMES, "new é file.py"])
    assert {c.origin for c in hunks if c.file != "new é file.py"} == {"uncommitted"}
    sha = sh(repo, "git", "rev-parse", "good").strip()
    for c in hunks:
        with scratch_worktree(repo, sha, [c.patch]) as tree:
            assert (tree / (c.file or "")).read_text() in ("x = 2\n", "y = 1\n")
    with scratch_worktree(repo, sha, [c.patch for c in hunks]) as tree:
        assert all((tree / name).read_text() == "x = 2\n" for name in QUOTED_NAMES)


def test_a_binary_change_is_a_candidate_with_git_binary_patch(tmp_path: Path) -> None:
    from tools.repo.worktree import scratch_worktree

    repo = make_repo(tmp_path)
    (repo / "table.bin").write_bytes(b"\0" * 64)
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-qm", "data")
    sh(repo, "git", "tag", "-f", "good")
    (repo / "table.bin").write_bytes(b"\0" * 128)
    _, cands = hunk_candidates(open_repo(repo), "good")
    (binary,) = cands
    assert (binary.file, binary.header, binary.origin) == ("table.bin", "binary", "uncommitted")
    assert "GIT binary patch" in binary.patch and binary.hunk_lines() == []
    (repo / "b.py").write_text("x = 2\n")
    _, again = hunk_candidates(open_repo(repo), "good")
    assert binary.id in {c.id for c in again} and len(again) == 2
    sha = sh(repo, "git", "rev-parse", "good").strip()
    with scratch_worktree(repo, sha, [binary.patch]) as tree:
        assert (tree / "table.bin").read_bytes() == b"\0" * 128


def test_own_files_are_left_out_by_exact_path_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tools.repo.candidates import own_paths

    repo = make_repo(tmp_path)
    for name in ["debug-agent.toml", "lib/debug-agent.toml", "sessions/mine.py", "out/s/t.jsonl"]:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("x = 1\n")
    (repo / ".debug-agent" / "servers").mkdir(parents=True)
    (repo / ".debug-agent" / "servers" / "1.json").write_text("{}\n")
    (repo / ".debug-agent-notes.py").write_text("y = 1\n")  # a name that only starts like ours
    monkeypatch.setenv("DEBUG_AGENT_SESSIONS_DIR", str(repo / "out"))
    monkeypatch.setenv("DEBUG_AGENT_STATE_DIR", str(repo / ".debug-agent"))
    own = own_paths(repo)
    assert own == [".debug-agent", "debug-agent.toml", "out"]
    _, cands = hunk_candidates(open_repo(repo), "good", own)
    assert sorted(c.file or "" for c in cands) == [
        ".debug-agent-notes.py",
        "lib/debug-agent.toml",
        "sessions/mine.py",
    ]


def test_a_file_emptied_stays_an_empty_file_in_every_tree(tmp_path: Path) -> None:
    """Werkzeug 1.0.1..2.0.0 empties examples/coolmagic/views/__init__.py: unidiff takes a
    file emptied to its last line for a deleted one, and the rebuilt tree lost it."""
    from tools.repo.candidates import commit_changes
    from tools.repo.worktree import scratch_worktree

    repo = make_repo(tmp_path, {"pkg/__init__.py": "# a docstring\n", "pkg/a.py": "x = 1\n"})
    (repo / "pkg/__init__.py").write_text("")
    sh(repo, "git", "commit", "-qam", "empty the package's __init__")
    cands = commit_changes(open_repo(repo), "good", "HEAD")
    [emptied] = cands.candidates
    assert "+++ b/pkg/__init__.py" in emptied.patch
    with scratch_worktree(repo, cands.good_sha, [emptied.patch]) as tree:
        assert (tree / "pkg/__init__.py").read_text() == ""


def test_a_text_file_that_is_not_utf8_travels_as_a_binary_patch(tmp_path: Path) -> None:
    """A Latin-1 file's hunks held bytes no JSON state can hold: `diff` was an internal error
    and an investigation stopped on its first checkpoint. Its change is now git's binary patch,
    which rebuilds the bytes exactly, in the working tree's diff and in a commit's."""
    from tools.repo.candidates import commit_changes
    from tools.repo.worktree import scratch_worktree

    repo = make_repo(tmp_path)
    (repo / "names.txt").write_bytes("café = 1\n".encode("latin-1"))
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-qm", "data")
    sh(repo, "git", "tag", "-f", "good")
    changed = "café = 2\nnaïve = 3\n".encode("latin-1")
    (repo / "names.txt").write_bytes(changed)
    (repo / "b.py").write_text("x = 2\n")
    _, cands = hunk_candidates(open_repo(repo), "good")
    latin = next(c for c in cands if c.file == "names.txt")
    assert latin.header == "not UTF-8" and "GIT binary patch" in latin.patch
    json.dumps([c.model_dump() for c in cands]).encode()  # the state can hold every one
    sha = sh(repo, "git", "rev-parse", "good").strip()
    with scratch_worktree(repo, sha, [latin.patch]) as tree:
        assert (tree / "names.txt").read_bytes() == changed
    (repo / "debug-agent.toml").write_text(
        "[bench]\nkind = 'command'\ncommand = 'true'\nmetric_regex = '(x)'\n"
    )
    listed = run_cli("diff", "--json", cwd=repo)
    assert listed.returncode == 0, listed.stderr
    assert latin.id in listed.stdout
    sh(repo, "git", "commit", "-qam", "both")
    found = commit_changes(open_repo(repo), "good", "HEAD")
    assert [c.header for c in found.candidates if c.file == "names.txt"] == ["not UTF-8"]


NAME_BENCH = """import os
named = [f for f in os.listdir(b".") if f.startswith(b"caf")]
print("x:", 2 if named and open(named[0]).read() == "X = 1\\n" else 1)
"""


def test_a_file_name_that_is_not_utf8_is_a_candidate_a_state_can_hold(tmp_path: Path) -> None:
    """A name of Latin-1 bytes reached the state as surrogate escapes: `diff` and the run were
    internal errors. Its id and file are shown with `\\xe9`; its patch names it in git's octal
    quoting, so the scratch tree gets the very bytes."""
    repo = make_repo(tmp_path, {"bench.py": NAME_BENCH})
    (repo / "debug-agent.toml").write_text(
        "[bench]\nkind = 'command'\ncommand = '{python} bench.py'\nmetric = 'x'\n"
        "metric_regex = 'x: (\\d+)'\n"
    )
    (repo / os.fsdecode(b"caf\xe9.py")).write_text("X = 1\n")
    done = run_cli("investigate", "--symptom", "x 2 (was 1)", "--json", cwd=repo)
    result = json.loads(done.stdout)
    assert result["status"] == "confirmed", result["notes"]
    (culprit,) = result["culprits"]
    assert culprit["id"].startswith("caf\\xe9-")
    json.loads((Path(result["session_dir"]) / "state.json").read_text())
