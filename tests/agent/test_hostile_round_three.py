"""Hostile inputs, round three: a bare repository as the target, chat lines that look like rich
markup, and bytes that are not text on chat's stdin. One clear line or a normal answer, never a
traceback or an internal error."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import (
    assert_one_line_error,
    bench_repo,
    investigate_seed,
    make_repo,
    run_cli,
    sh,
)
from tools.lab.create import create_lab


def _bare(tmp_path: Path) -> Path:
    bare = tmp_path / "bare.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(make_repo(tmp_path)), str(bare)], check=True
    )
    return bare


def _sha256(tmp_path: Path) -> Path:
    """A repository whose ids are sha256 ones (GitPython's object reader takes sha1 only:
    its blame was a KeyError in the report, after every launch)."""
    repo = tmp_path / "sha256"
    sh(tmp_path, "git", "init", "-q", "--object-format=sha256", str(repo))
    (repo / "a.py").write_text("x = 1\n")
    sh(repo, "git", "add", "a.py")
    sh(repo, "git", "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "good")
    (repo / "a.py").write_text("x = 2\n")
    return repo


@pytest.mark.parametrize(
    ("make", "said"), [(_bare, "bare repository"), (_sha256, "uses sha256 object ids")]
)
def test_a_repository_debug_agent_cannot_use_is_one_line(
    tmp_path: Path, make: Callable[[Path], Path], said: str
) -> None:
    repo = make(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    (work / "debug-agent.toml").write_text(
        f'[target]\nrepo = "{repo}"\n[bench]\nkind = "command"\n'
        'command = "echo latency_ms: 5"\nmetric_regex = "latency_ms: (\\\\S+)"\n'
    )
    for argv in (["check"], ["diff"], ["investigate", "--symptom", "9 (was 5)", "--good", "HEAD"]):
        done = run_cli(*argv, cwd=work)
        assert_one_line_error(done)
        assert said in done.stderr, done.stderr


def test_chat_reads_markup_and_bytes_as_plain_text(tmp_path: Path) -> None:
    lab = tmp_path / "lab"
    create_lab("seed", lab)
    garbage = bytes(range(128, 256)) + b"\xff\xfe\x00\n"
    # digits str.isdigit takes and int() does not
    budgets = "/budget ²\n/budget ٣\n/budget 1\n".encode()
    drops = b"/drop [red]y\n/drop parallel_state-2ce853\n/drop parallel_state-2ce853  \n"
    # a NUL byte no environment carries (after /run, an internal error that ended the chat)
    nul = b"/suggest A=x\x00b\n/experiment --env A=\x00\n/experiment --env\n"
    lines = b"/foo[/bar]\n[bold]x\n" + drops + budgets + garbage + nul + b"/quit\n"
    done = subprocess.run(
        [sys.executable, "-m", "agent", "chat", "--symptom", "verify 29ms"],
        cwd=lab,
        input=lines,
        capture_output=True,
        timeout=120,
        env={**os.environ, "DEBUG_AGENT_SESSIONS_DIR": str(tmp_path / "sessions")},
    )
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, err[-2000:]
    assert "Traceback" not in out + err and "internal error" not in out + err
    assert "unknown command /foo[/bar]" in out  # shown as typed, not read as markup
    assert "no hypothesis '[red]y'" in out
    assert out.count("usage: /budget [N]") == 3
    assert out.count("usage: /drop ID REASON") == 2  # a drop without its why is not recorded
    assert out.count("holds a NUL byte, which no environment carries") == 2
    assert "'--env' lacks its value" in out
    assert "left session" in out
    transcript = next((tmp_path / "sessions").rglob("transcript.jsonl"))
    for line in transcript.read_text().splitlines():
        json.loads(line)


def _objects(git_dir: Path) -> dict[str, int]:
    return {
        str(p.relative_to(git_dir)): p.stat().st_size
        for p in (git_dir / "objects").rglob("*")
        if p.is_file()
    }


def test_the_users_git_runs_no_hooks_and_gains_no_objects(tmp_path: Path) -> None:
    """A post-checkout hook that edits a tracked file would make every scratch tree another
    tree; the tree check's `git add` and each experiment's `git apply --index` once left their
    blobs in the user's .git/objects; a lock file once stayed in the temp folder. The lab's
    folder holds the alternates' separator (read as two folders: an internal error at the
    first launch) and a byte that is not UTF-8 (the lab's truth file: an internal error)."""
    lab = tmp_path / os.fsdecode(b"lab:\xff")
    create_lab("seed", lab)
    hook = lab / ".git" / "hooks" / "post-checkout"
    hook.write_text("#!/bin/sh\necho '# touched by a hook' >> README.md\n")
    hook.chmod(0o755)
    # a file-system monitor (watchman's hook, as `git config core.fsmonitor` names it)
    monitor = tmp_path / "fsmonitor"
    monitor.write_text(f"#!/bin/sh\necho run >> {tmp_path / 'monitor-runs'}\nexit 1\n")
    monitor.chmod(0o755)
    sh(lab, "git", "config", "core.fsmonitor", str(monitor))
    # a clean/smudge filter on every .py file once ran for each file of every scratch tree
    runs = tmp_path / "filter-runs"
    (lab / ".git" / "info" / "attributes").write_text("*.py filter=count\n")
    for direction in ("clean", "smudge"):
        sh(lab, "git", "config", f"filter.count.{direction}", f"echo {direction} %f >> {runs}; cat")
    # untracked, so git add writes its blob; its name clears the screen if a terminal obeys it
    (lab / "new\x1b[2Jmodule.py").write_text("X = 1\n")
    # a right-to-left override: "evil\u202ecs.py" displays as "evilyp.sc"
    (lab / "evil\u202ecs.py").write_text("Y = 1\n")
    before = _objects(lab / ".git")
    temp, state = tmp_path / "tmp", tmp_path / "state"
    temp.mkdir()
    # sessions where a user's would go: the state folder, since the lab is a repository
    env = {"TMPDIR": str(temp), "DEBUG_AGENT_SESSIONS_DIR": "", "XDG_STATE_HOME": str(state)}
    done = investigate_seed(lab, "--max-launches", "2", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["status"] != "error", done.stdout[-3000:]
    report = (Path(result["session_dir"]) / "report.md").read_text()
    assert "\x1b" not in done.stderr and "\x1b" not in report
    assert "new\\x1b[2Jmodule.py" in report  # shown, not obeyed
    html = run_cli("report", result["session_dir"], "--html", env={"XDG_STATE_HOME": str(state)})
    page = Path(html.stdout.strip()).read_text()
    assert "\u202e" not in done.stderr
    for shown in (report, page):
        assert "\u202e" not in shown and "evil\\u202ecs.py" in shown
    # `sessions` run in the repository lists it (it once looked in ./sessions and said nothing)
    listed = run_cli(
        "sessions", cwd=lab, env={"DEBUG_AGENT_SESSIONS_DIR": "", "XDG_STATE_HOME": str(state)}
    )
    assert Path(result["session_dir"]).name in listed.stdout, listed.stdout + listed.stderr
    assert _objects(lab / ".git") == before
    assert not (lab / ".git" / "worktrees").exists() or not any(
        (lab / ".git" / "worktrees").iterdir()
    )
    assert list(temp.iterdir()) == []  # no lock file, no object store, no scratch tree left
    assert not (tmp_path / "monitor-runs").exists()
    # once per file state: a file's good and bad content, each cleaned and smudged once
    counts = Counter(runs.read_text().splitlines())
    assert counts and max(counts.values()) <= 2, counts.most_common(3)


DAEMONS = """
import http.server, os, sys, time

port, pids = int(sys.argv[1]), sys.argv[2]
if os.fork() == 0:  # a daemon: double fork, its own session, the middle parent gone
    os.setsid()
    if os.fork() == 0:
        open(pids + ".daemon", "w").write(str(os.getpid()))
        time.sleep(600)
    os._exit(0)
if os.fork() == 0:  # a child in its own session that ignores nothing: killpg cannot reach it
    os.setsid()
    open(pids + ".session", "w").write(str(os.getpid()))
    time.sleep(600)
    os._exit(0)


class Ok(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()


http.server.HTTPServer(("127.0.0.1", port), Ok).serve_forever()
"""


def test_a_daemon_and_a_child_in_its_own_session_stop_with_the_launch(tmp_path: Path) -> None:
    import time

    from tests.conftest import wait_gone
    from tools.proc.groups import stop_group
    from tools.proc.server import free_port, running_server

    script = tmp_path / "daemons.py"
    script.write_text(DAEMONS)
    port, pids = free_port(), tmp_path / "pid"
    with running_server(
        [sys.executable, str(script), str(port), str(pids)], tmp_path, {}, port, tmp_path / "s.log"
    ):
        for kind in ("daemon", "session"):
            deadline = time.monotonic() + 30
            while not Path(f"{pids}.{kind}").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        started = [int(Path(f"{pids}.{kind}").read_text()) for kind in ("daemon", "session")]
        stop_started = time.monotonic()
    stop_took = time.monotonic() - stop_started
    assert wait_gone(started, 1.0) == [], "a process of the launch outlived it"
    # SIGTERM reached every one of them: the stop did not sit out its grace time
    assert stop_took < stop_group.__defaults__[0], stop_took


def test_a_dirty_submodule_stops_the_run_with_one_line_naming_it(tmp_path: Path) -> None:
    """Its folder would be empty in every scratch tree while the run called the rebuilt bad
    state the working tree."""
    (tmp_path / "s").mkdir()
    (tmp_path / "m").mkdir()
    sub, main = make_repo(tmp_path / "s"), make_repo(tmp_path / "m")
    git = ["git", "-c", "protocol.file.allow=always", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "submodule", "add", "-q", str(sub), "dep"], cwd=main, check=True)
    subprocess.run([*git, "commit", "-qm", "dep"], cwd=main, check=True)
    (main / "dep" / "a.py").write_text("changed inside the submodule\n")
    (main / "debug-agent.toml").write_text(
        '[bench]\nkind = "command"\ncommand = "echo latency_ms: 5"\n'
        'metric_regex = "latency_ms: (\\\\S+)"\n'
    )
    done = run_cli("investigate", "--symptom", "9 (was 5)", "--good", "HEAD", "--json", cwd=main)
    result = json.loads(done.stdout)
    assert result["status"] == "error"
    assert any("submodule dep has uncommitted changes" in n for n in result["notes"]), result


def test_a_merge_stopped_on_a_conflict_stops_the_run_with_one_line_naming_it(
    tmp_path: Path,
) -> None:
    """The working tree holds conflict markers, a state nobody ran: the run names the file
    and the way out, measures nothing and leaves the merge as it was."""
    main = make_repo(tmp_path, {"a.py": "X = 1\n"})
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    for branch, value in (("side", "2"), ("-", "3")):
        subprocess.run(
            [*git, "checkout", "-q", *(["-b"] if branch == "side" else []), branch],
            cwd=main,
            check=True,
        )
        (main / "a.py").write_text(f"X = {value}\n")
        subprocess.run([*git, "commit", "-qam", branch], cwd=main, check=True)
    merge = subprocess.run([*git, "merge", "side"], cwd=main, capture_output=True, text=True)
    assert merge.returncode != 0 and "CONFLICT" in merge.stdout
    (main / "debug-agent.toml").write_text(
        '[bench]\nkind = "command"\ncommand = "echo latency_ms: 5"\n'
        'metric_regex = "latency_ms: (\\\\S+)"\n'
    )
    before = sh(main, "git", "status", "--porcelain=v2"), sh(main, "git", "ls-files", "--stage")
    done = run_cli("investigate", "--symptom", "9 (was 5)", "--json", cwd=main)
    result = json.loads(done.stdout)
    assert result["status"] == "error" and result["launches"] == 0, result
    assert any("a.py has an unresolved conflict" in n for n in result["notes"]), result
    assert (
        sh(main, "git", "status", "--porcelain=v2"),
        sh(main, "git", "ls-files", "--stage"),
    ) == before


def test_a_repository_with_no_commit_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("X = 1\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "debug-agent.toml").write_text(
        '[bench]\nkind = "command"\ncommand = "echo latency_ms: 5"\n'
        'metric_regex = "latency_ms: (\\\\S+)"\n'
    )
    for argv in (["check"], ["diff"], ["investigate", "--symptom", "9 (was 5)"]):
        done = run_cli(*argv, cwd=tmp_path)
        assert_one_line_error(done)
        assert "has no commit yet" in done.stderr, done.stderr


def test_a_shallow_clone_and_a_machine_without_git_are_one_line_each(tmp_path: Path) -> None:
    source = make_repo(tmp_path)
    clone = tmp_path / "clone"
    sh(tmp_path, "git", "clone", "-q", "--depth", "1", f"file://{source}", str(clone))
    (clone / "debug-agent.toml").write_text(
        '[bench]\nkind = "command"\ncommand = "echo latency_ms: 5"\n'
        'metric_regex = "latency_ms: (\\\\S+)"\n'
    )
    done = run_cli("investigate", "--symptom", "9 (was 5)", "--good", "HEAD~3", cwd=clone)
    assert_one_line_error(done)
    assert "shallow clone" in done.stderr and "--unshallow" in done.stderr, done.stderr
    no_git = tmp_path / "bin"  # a PATH without git (the interpreter is named by its path)
    no_git.mkdir()
    for argv in (["diff"], ["investigate", "--symptom", "9 (was 5)"]):
        done = run_cli(*argv, cwd=clone, env={"PATH": str(no_git)})
        assert_one_line_error(done)
        assert "git is not on PATH" in done.stderr, done.stderr


def test_a_partial_clone_whose_remote_is_gone_is_one_line(tmp_path: Path) -> None:
    """`git diff` asks the promisor remote for the blobs the clone left out: with the remote
    gone it was an internal error of three lines, GitPython's "Cmd('git') failed"."""
    source = make_repo(tmp_path, {"a.py": "x = 1\n"})
    sh(source, "git", "config", "uploadpack.allowFilter", "true")
    (source / "a.py").write_text("x = 2\n")
    sh(source, "git", "commit", "-qam", "bad")
    clone = tmp_path / "clone"
    sh(tmp_path, "git", "clone", "-q", "--filter=blob:none", f"file://{source}", str(clone))
    shutil.rmtree(source)
    (clone / "debug-agent.toml").write_text(
        '[target]\ngood = "good"\n[bench]\nkind = "command"\ncommand = "echo latency_ms: 5"\n'
        'metric_regex = "latency_ms: (\\\\S+)"\n'
    )
    for argv in (["diff"], ["investigate", "--symptom", "9 (was 5)"]):
        done = run_cli(*argv, cwd=clone)
        assert_one_line_error(done)
        assert "git diff failed" in done.stderr and "partial clone" in done.stderr, done.stderr


def test_a_full_temp_folder_is_named_as_the_place_to_free(tmp_path: Path) -> None:
    """git said "unable to write file" or "No space left on device" and nothing more: the user
    looked at the repository's disk, where debug-agent writes nothing."""
    assert os.geteuid() == 0, "mounts a small tmpfs: run as root (CI does)"
    lab, small = tmp_path / "lab", tmp_path / "small"
    create_lab("seed", lab)
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(small)], check=True)
    try:
        done = run_cli("experiment", cwd=lab, env={"TMPDIR": str(small)})
        assert_one_line_error(done, f"({small}, where debug-agent's scratch trees", "set TMPDIR")
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False)


def test_a_disk_that_fills_mid_run_names_the_session_and_how_to_go_on(tmp_path: Path) -> None:
    """A tmpfs for the sessions, filled once the search started: one line naming the session
    folder and the resume command. The folder, moved off the full disk, resumes where it now
    is to the verdict (resuming a copy once wrote half the session back to the old path)."""
    import shutil
    import time

    assert os.geteuid() == 0, "mounts a small tmpfs: run as root (CI does)"
    lab, disk, moved = tmp_path / "lab", tmp_path / "disk", tmp_path / "moved"
    create_lab("seed", lab)
    disk.mkdir()
    moved.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=70m", "tmpfs", str(disk)], check=True)
    try:
        env = {**os.environ, "DEBUG_AGENT_SESSIONS_DIR": str(disk / "sessions")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent", "investigate", "--symptom", "verify 29ms", "--json"],
            cwd=lab,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            found = list((disk / "sessions").glob("*/transcript.jsonl"))
            if found and "search: revert" in found[0].read_text():
                break
            time.sleep(0.05)
        filler = disk / "filler"
        with filler.open("wb") as out, contextlib.suppress(OSError):
            while True:
                out.write(b"\0" * (1 << 20))
        _, err = proc.communicate(timeout=300)
        (session,) = (disk / "sessions").iterdir()
        assert proc.returncode == 1 and "Traceback" not in err, err[-3000:]
        last = err.strip().splitlines()[-1]
        assert last.startswith(f"error: cannot write in {session}: No space left on device")
        assert last.endswith(f"debug-agent investigate --resume {session.name}"), last
        shutil.copytree(session, moved / session.name)
        filler.unlink()
        before = sorted(p.name for p in session.rglob("*"))
        done = run_cli(
            "investigate",
            "--resume",
            session.name,
            "--json",
            cwd=lab,
            timeout=300,
            env={"DEBUG_AGENT_SESSIONS_DIR": str(moved)},
        )
        result = json.loads(done.stdout)
        assert result["status"] == "confirmed", done.stderr[-2000:]
        assert result["session_dir"] == str(moved / session.name)
        assert sorted(p.name for p in session.rglob("*")) == before  # the old folder untouched
        assert (moved / session.name / "report.md").read_text().startswith("# Investigation")
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_relative_state_folders_never_put_a_session_in_the_users_tree(tmp_path: Path) -> None:
    """XDG_STATE_HOME=relx, run in the repository, wrote every session into it: untracked files
    that the next investigation searched as candidates (38 of them, 13 launches for a 4-launch
    answer). A relative XDG folder is ignored, as the XDG spec says; our own variables are read
    from the folder the command runs in, and named whole."""
    repo = bench_repo(tmp_path, "print('latency_ms: 5')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBUG_AGENT_")}
    env.update(HOME=str(tmp_path / "home"), XDG_STATE_HOME="relx", XDG_CACHE_HOME="rely")
    before = sh(repo, "git", "status", "--porcelain", "--untracked-files=all")
    argv = [sys.executable, "-m", "agent", "investigate", "--symptom", "latency 5ms", "--json"]
    done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    result = json.loads(done.stdout)
    assert sh(repo, "git", "status", "--porcelain", "--untracked-files=all") == before
    assert Path(result["session_dir"]).is_relative_to(tmp_path / "home" / ".local" / "state")
    env["DEBUG_AGENT_SESSIONS_DIR"] = "../elsewhere"
    done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert json.loads(done.stdout)["session_dir"].startswith(str(tmp_path / "elsewhere"))


def test_paths_that_look_like_rich_markup_are_printed_as_they_are(tmp_path: Path) -> None:
    """A folder named "p[/q]" made every investigation there an internal error (rich read the
    config's path as a closing tag), and `diff`, `logs parse` and the sessions table too."""
    lab = tmp_path / "p[/q]" / "lab"
    create_lab("seed", lab)
    (lab / "d[").mkdir()
    (lab / "s[").mkdir()
    (lab / "d[/x].py").write_text("X = 1\n")  # untracked: a candidate named "d[/x].py"
    (lab / "s[/t].log").write_text("[2026-12-07 10:00:00] INFO [/t] started\n")
    state = {"XDG_STATE_HOME": str(tmp_path / "state"), "DEBUG_AGENT_SESSIONS_DIR": ""}
    done = investigate_seed(lab, "--max-launches", "2", env=state)
    assert done.returncode == 0, done.stderr[-2000:]
    for args in (["diff"], ["logs", "parse", "s[/t].log"]):
        shown = run_cli(*args, cwd=lab)
        assert shown.returncode == 0 and "internal error" not in shown.stderr, shown.stderr
    assert "d[/x].py" in run_cli("diff", cwd=lab).stdout
    (lab / "evil\u202ecs.py").write_text("Y = 1\n")  # shown as written, not right to left
    for args in (["diff"], ["paths"]):
        listed = run_cli(*args, cwd=lab).stdout
        assert "evil\\u202ecs" in listed and "\u202e" not in listed, listed
    table = subprocess.run(  # a table on a terminal only
        ["script", "-qec", f"{sys.executable} -m agent sessions", "/dev/null"],
        cwd=lab,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **state, "COLUMNS": "200"},
    )
    assert "internal error" not in table.stdout and "p[/q]" in table.stdout, table.stdout
