"""The commits first, on real trees: a real git history, a real bench process, the first bad
commit found as git bisect finds it, then its hunks alone.

The shape that went wrong on real projects: the culprit's lines sit in a file added earlier in
the range, so against the good ref they form one hunk spanning two commits; and a test file
the culprit commit also touches, linked to the culprit by a name, is never imported."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import git

from tests.conftest import run_cli
from tests.tools.work_library import BENCH, config, investigate

CORE = textwrap.dedent("""\
    import time


    def work() -> None:
        time.sleep(0.001)
""")
CORE_WITH_CACHE = textwrap.dedent("""\
    import time

    from mylib.cache import lookup


    def work() -> None:
        time.sleep(0.001)
        lookup("key")
""")
CACHE = textwrap.dedent("""\
    def lookup(key: str) -> str:
        return key
""")
SLOW_CACHE = textwrap.dedent("""\
    import time

    DELAY_S = 0.02


    def lookup(key: str) -> str:
        time.sleep(DELAY_S)  # "warm the cache"
        return key
""")
BUSY_CACHE = textwrap.dedent("""\
    ROUNDS = 1_000_000


    def lookup(key: str) -> str:
        total = 0
        for n in range(ROUNDS):  # "warm the cache": CPU time a profile sees
            total += n
        return key
""")
TEST_CACHE = textwrap.dedent("""\
    from mylib.cache import DELAY_S, lookup


    def test_lookup() -> None:
        assert DELAY_S > 0 and lookup("a") == "a"
""")


def _repo(root: Path) -> git.Repo:
    """A new repository with its debug-agent.toml (ignored: debug-agent's own file)."""
    repo = git.Repo.init(root, initial_branch="main")
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "Dev")
        cw.set_value("user", "email", "dev@example.invalid")
    (root / "debug-agent.toml").write_text(config(pythonpath=".", launches=20))
    (root / ".gitignore").write_text("debug-agent.toml\n")
    return repo


def _commit(repo: git.Repo, files: dict[str, str], subject: str) -> str:
    root = Path(str(repo.working_tree_dir))
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    repo.git.add("-A")
    repo.git.commit("-q", "-m", subject)
    return repo.head.commit.hexsha


def _history(root: Path) -> str:
    """Ten commits after the good tag; the seventh makes `lookup` slow. Returns its sha."""
    repo = _repo(root)
    _commit(repo, {"mylib/__init__.py": "", "mylib/core.py": CORE, "bench.py": BENCH}, "v1")
    repo.create_tag("good")
    _commit(repo, {"README.md": "mylib\n"}, "Add a README (#1)")
    _commit(repo, {"mylib/cache.py": CACHE}, "Add a cache module (#2)")
    _commit(repo, {"mylib/core.py": CORE_WITH_CACHE}, "Look keys up in the cache (#3)")
    _commit(repo, {"README.md": "mylib: a library\n"}, "README: say what it is (#4)")
    _commit(repo, {"docs/usage.md": "call work()\n"}, "Docs: usage (#5)")
    _commit(repo, {"CHANGELOG.md": "- cache\n"}, "Changelog (#6)")
    culprit = _commit(
        repo,
        {"mylib/cache.py": SLOW_CACHE, "tests/test_cache.py": TEST_CACHE},
        "Warm the cache on lookup (#7)",
    )
    _commit(repo, {"CHANGELOG.md": "- cache\n- warm cache\n"}, "Changelog (#8)")
    _commit(repo, {"docs/usage.md": "call work() often\n"}, "Docs: more usage (#9)")
    _commit(repo, {"README.md": "mylib: a small library\n"}, "README: small (#10)")
    return culprit


def test_the_first_bad_commit_is_found_on_real_trees_then_its_hunk(tmp_path: Path) -> None:
    culprit = _history(tmp_path)
    result = investigate(tmp_path, "work_ms 21 (was 1)")

    assert result["status"] == "confirmed", result["notes"]
    bisection = result["bisection"]
    assert bisection["first_bad"]["sha"] == culprit
    assert bisection["first_bad"]["pr"] == 7
    tested = {t["sha"]: t["verdict"] for t in bisection["tested"]}
    assert tested[culprit] == "bad"
    assert tested[bisection["parent"]] == "good"
    # the hunk of that commit alone: the delay, not the file the range added around it
    [culprit_hunk] = result["culprits"]
    assert culprit_hunk["file"] == "mylib/cache.py"
    assert "DELAY_S" in culprit_hunk["diff"]
    assert culprit_hunk["commit"]["sha"] == culprit
    # linked to the culprit by a name, never imported: carried, never a cause
    dropped = {d["candidate"]: d for d in result["dropped"]}
    [test_file] = [d for d in dropped.values() if "never imported" in d["reason"]]
    assert test_file["file"] == "tests/test_cache.py"
    assert any(e.startswith(f"carried with {culprit_hunk['id']}") for e in test_file["evidence"])
    assert all(c["file"] != "tests/test_cache.py" for c in result["culprits"])
    report = (Path(result["session_dir"]) / "report.md").read_text()
    assert report.index(f"{culprit} is the first bad commit") < report.index("Symptom")
    # the ten commits cost about what git bisect run spends (4 probes and its 2 ends), plus
    # the replicated references and the two-way confirmation
    assert result["launches"] <= 12, result["launches"]


def _merged_history(root: Path, slow: str = SLOW_CACHE) -> str:
    """Pull requests merged with merge commits; the slow lookup arrives on a branch of three
    commits, the second of them the culprit. Returns its sha."""
    repo = _repo(root)
    files = {"mylib/__init__.py": "", "mylib/core.py": CORE_WITH_CACHE, "bench.py": BENCH}
    _commit(repo, {**files, "mylib/cache.py": CACHE}, "v1")
    repo.create_tag("good")
    culprit = ""
    for pr in range(1, 7):
        repo.git.checkout("-q", "-b", f"pr{pr}", "main")
        if pr == 4:
            _commit(repo, {"docs/cache.md": "a cache\n"}, "Docs for the warm cache")
            culprit = _commit(repo, {"mylib/cache.py": slow}, "Warm the cache on lookup")
            _commit(repo, {"CHANGELOG.md": "- warm cache\n"}, "Changelog: warm cache")
        else:
            _commit(repo, {f"docs/page{pr}.md": f"page {pr}\n"}, f"Docs page {pr}")
            _commit(repo, {f"docs/page{pr}.md": f"page {pr}, fixed\n"}, f"Docs page {pr}: fix")
        repo.git.checkout("-q", "main")
        _commit(repo, {f"notes/main{pr}.md": f"{pr}\n"}, f"Main work {pr}")  # a true merge
        repo.git.merge(
            "-q", "--no-ff", "-m", f"Merge pull request #{pr} from dev/pr{pr}", f"pr{pr}"
        )
    return culprit


def test_a_merge_that_is_the_first_bad_commit_is_bisected_into_its_second_parent(
    tmp_path: Path,
) -> None:
    """Without a profile (which would send the first probes straight to the commit that wrote
    the hot lines, below), git bisect's way: the merge, then its second parent's line."""
    culprit = _merged_history(tmp_path)
    with (tmp_path / "debug-agent.toml").open("a") as toml:
        toml.write("\n[profile]\nenabled = false\n")
    result = investigate(tmp_path, "work_ms 21 (was 1)")

    assert result["status"] == "confirmed", result["notes"]
    bisection = result["bisection"]
    assert bisection["first_bad"]["sha"] == culprit
    merge = git.Repo(tmp_path).git.log("--merges", "--grep", "#4", "--format=%H")
    tested = {t["sha"]: t["verdict"] for t in bisection["tested"]}
    assert tested[merge] == "bad" and tested[bisection["parent"]] == "good"
    [hunk] = result["culprits"]
    assert hunk["file"] == "mylib/cache.py" and hunk["commit"]["sha"] == culprit


def test_the_commit_that_wrote_the_hot_lines_is_probed_first_with_its_parent(
    tmp_path: Path,
) -> None:
    """The profile ties the slow lookup's hunk to the function spending the time; git blame
    names the commit on the merged branch that wrote it: that commit bad and its parent good
    make it the first bad commit in two probes, no merge probed."""
    culprit = _merged_history(tmp_path, BUSY_CACHE)
    result = investigate(tmp_path, "work_ms 21 (was 1)")
    transcript = (Path(result["session_dir"]) / "transcript.jsonl").read_text()
    # what the profile said and each launch, should the probes go another way
    said = [e["text"] for e in map(json.loads, transcript.splitlines()) if "text" in e]
    story = "\n".join(s for s in said if "profile" in s or "launch" in s or "commit" in s)

    assert result["status"] == "confirmed", result["notes"]
    bisection = result["bisection"]
    assert bisection["first_bad"]["sha"] == culprit, story
    tested = {t["sha"]: t["verdict"] for t in bisection["tested"]}
    parent = git.Repo(tmp_path).commit(culprit).parents[0].hexsha
    assert bisection["parent"] == parent
    assert tested[culprit] == "bad" and tested[parent] == "good", story
    merges = git.Repo(tmp_path).git.log("--merges", "--format=%H").split()
    head = git.Repo(tmp_path).head.commit.hexsha
    assert set(merges) & set(tested) <= {head}, story  # no merge needed a probe (HEAD: bad)
    assert result["launches"] <= 6  # the references (3 or 4), the commit and its parent
    [hunk] = result["culprits"]
    assert hunk["file"] == "mylib/cache.py" and hunk["commit"]["sha"] == culprit
    assert "off the first-parent line: it and its parent are probed first" in transcript


def test_a_session_stopped_inside_the_first_bad_commit_resumes_there(tmp_path: Path) -> None:
    """A budget spent after the narrowing: the resumed session builds on the first bad commit's
    parent again (the runner follows the checkpointed state), not on the range's good end."""
    culprit = _history(tmp_path)
    done = run_cli(
        "investigate",
        "--symptom",
        "work_ms 21 (was 1)",
        "--max-launches",
        "7",
        "--json",
        cwd=tmp_path,
    )
    stopped = json.loads(done.stdout)
    assert stopped["status"] == "budget_exhausted", stopped["notes"]
    assert stopped["bisection"]["first_bad"]["sha"] == culprit  # narrowed before the stop
    done = run_cli(
        "investigate",
        "--resume",
        stopped["session"],
        "--max-launches",
        "20",
        "--json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["status"] == "confirmed", result["notes"]
    [hunk] = result["culprits"]
    assert hunk["commit"]["sha"] == culprit and "DELAY_S" in hunk["diff"]


def test_a_cause_in_a_later_commit_is_searched_after_the_first(tmp_path: Path) -> None:
    """Two causes in two commits: the first bad commit holds most of the gap (judged at the bad
    level), a later commit the rest. The report says the range's bad end is worse than the
    commit found, and the search goes on from that commit, as git bisect run again from there
    would: the later commit is found too, each with its own hunk."""
    repo = _repo(tmp_path)
    files = {"mylib/__init__.py": "", "mylib/core.py": CORE_WITH_CACHE, "bench.py": BENCH}
    _commit(repo, {**files, "mylib/cache.py": CACHE}, "v1")
    repo.create_tag("good")
    shas = {}
    for n in range(1, 7):
        text = {2: SLOW_CACHE, 5: SLOW_CACHE.replace("DELAY_S)", "DELAY_S * 2)")}.get(n)
        files = {"mylib/cache.py": text} if text else {f"docs/p{n}.md": f"{n}\n"}
        shas[n] = _commit(repo, files, f"c{n}")
    result = investigate(tmp_path, "work_ms 41 (was 1)")

    assert result["status"] == "confirmed", result["notes"]
    assert result["bisection"]["first_bad"]["subject"] == "c2"
    [outside] = result["bisection"]["outside"]
    assert "the range's bad end" in outside and "later commits" in outside
    assert result["bisection"]["rest_after"] == shas[2]
    [rest] = result["rest"]
    assert rest["good"] == shas[2] and rest["status"] == "confirmed", rest
    assert rest["first_bad"] == shas[5]
    later = json.loads(
        (Path(result["session_dir"]).parent / rest["session"] / "result.json").read_text()
    )
    [hunk] = later["culprits"]
    assert "DELAY_S * 2" in hunk["diff"] and hunk["commit"]["sha"] == shas[5]
    report = (Path(result["session_dir"]) / "report.md").read_text()
    assert outside in report and f"`{shas[5][:12]}` is the next bad commit" in report
