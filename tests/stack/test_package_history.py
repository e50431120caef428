"""Inside a package's first slow release, its own git history (`[stack] repos`): the commits
between the two releases' tags searched as a range's are, then the first slow commit's hunks;
and where the history cannot serve (no tag, files the tree lacks), the release files instead,
saying why."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT, run_cli, sh
from tests.node.sshd import Sshd
from tests.stack.wheels import Wheel, make_wheels
from tools.lab.stack_lab import stack_config
from tools.stack.package_history import history_clone, release_commit, source_root

BENCH = """\
import time
import slowlib

for _ in range(3):
    started = time.perf_counter()
    slowlib.work()
    print(f"latency_ms: {(time.perf_counter() - started) * 1000:.3f}")
"""


def _code(seconds: float, other: int) -> str:
    spacer = "".join(f"# {i}\n" for i in range(8))
    return (
        f"import time\n\ndef work():\n    time.sleep({seconds})\n\n{spacer}\n"
        f"def other():\n    return {other}\n"
    )


def _commit(repo: Path, message: str, files: dict[str, str], tag: str | None = None) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-qm", message)
    if tag:
        sh(repo, "git", "tag", tag)


def slowlib_project(tmp_path: Path) -> tuple[Path, Path]:
    """slowlib's own repository (a src/ layout, tags v1.0 .. v1.2) and the wheels of its
    releases, each built from its tag's file: 1.2 made `work` slow, in the third of the five
    commits after v1.1 (the others: the readme, `other`, a test, the version)."""
    project, wheels = tmp_path / "slowlib", tmp_path / "wheels"
    project.mkdir()
    sh(project, "git", "init", "-q", "-b", "main")
    sh(project, "git", "config", "user.email", "t@example.invalid")
    sh(project, "git", "config", "user.name", "t")
    module = "src/slowlib/__init__.py"

    def source(version: str, seconds: float, other: int) -> str:
        return f"VERSION = {version!r}\n{_code(seconds, other)}"

    _commit(project, "slowlib 1.0", {module: source("1.0", 0.01, 1), "README.md": "slowlib\n"})
    sh(project, "git", "tag", "v1.0")
    _commit(project, "release 1.1", {module: source("1.1", 0.01, 1)}, "v1.1")
    _commit(project, "readme: usage", {"README.md": "slowlib\n\nimport it\n"})
    _commit(project, "other returns 2", {module: source("1.1", 0.01, 2)})
    _commit(project, "work waits for the device", {module: source("1.1", 0.05, 2)})
    _commit(project, "a test of work", {"tests/test_work.py": "def test(): pass\n"})
    _commit(project, "release 1.2", {module: source("1.2", 0.05, 2)}, "v1.2")
    timings = (("1.0", 0.01, 1), ("1.1", 0.01, 1), ("1.2", 0.05, 2))
    specs = [Wheel("slowlib", v, code=_code(s, o)) for v, s, o in timings]
    make_wheels(wheels, specs + [Wheel("unused", "1.0"), Wheel("unused", "2.0")])
    return project, wheels


def service(tmp_path: Path, wheels: Path, repos: str) -> Path:
    repo = tmp_path / "service"
    repo.mkdir()
    sh(repo, "git", "init", "-q", "-b", "main")
    sh(repo, "git", "config", "user.email", "t@example.invalid")
    sh(repo, "git", "config", "user.name", "t")
    (repo / "bench.py").write_text(BENCH)
    (repo / "good.txt").write_text("slowlib==1.0\nunused==1.0\n")
    (repo / "bad.txt").write_text("slowlib==1.2\nunused==2.0\n")
    sh(repo, "git", "add", ".")
    sh(repo, "git", "commit", "-qm", "the service and its two package sets")
    more = f"repos = {{ slowlib = {repos!r} }}\n\n[budget]\nmax_launches = 20\n"
    (repo / "debug-agent.toml").write_text(stack_config("good.txt", "bad.txt", str(wheels), more))
    return repo


def _confirmed(repo: Path, cache: Path) -> tuple[dict, str]:
    """The investigation of the service's upgrade, confirmed; its result and transcript."""
    args = ["investigate", "--symptom", "latency_ms 50 (was 10)", "--json"]
    done = run_cli(*args, cwd=repo, env={"XDG_CACHE_HOME": str(cache)}, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["status"] == "confirmed", result["notes"]
    return result, Path(result["session_dir"], "transcript.jsonl").read_text()


def test_the_first_slow_commit_inside_the_first_slow_release(tmp_path: Path) -> None:
    project, wheels = slowlib_project(tmp_path)
    repo = service(tmp_path, wheels, str(project))
    result, transcript = _confirmed(repo, tmp_path / "cache")
    releases = result["releases"]
    assert (releases["before"], releases["first_slow"]) == ("1.1", "1.2"), releases
    # the project's commits between v1.1 and v1.2, bisected: the third is the first slow one
    first_bad = result["bisection"]["first_bad"]
    assert first_bad["subject"] == "work waits for the device", result["bisection"]
    [culprit] = result["culprits"]
    assert culprit["package"] == "slowlib 1.1 -> 1.2", culprit
    assert culprit["file"] == "src/slowlib/__init__.py", culprit
    assert "+    time.sleep(0.05)" in culprit["diff"] and "return 2" not in culprit["diff"]
    assert culprit["commit"]["subject"] == "work waits for the device", culprit
    report = Path(result["session_dir"], "report.md").read_text()
    assert "work waits for the device" in report and "slowlib 1.1 -> 1.2" in report
    assert "read from the project's git history, v1.1..v1.2 of" in transcript
    assert "(src/ on PYTHONPATH)" in transcript
    # the project's clone is ours: the user's repository gained nothing
    assert sh(project, "git", "status", "--porcelain") == ""
    assert len(sh(project, "git", "worktree", "list").splitlines()) == 1


def test_a_history_without_the_release_tag_falls_back_to_the_release_files(
    tmp_path: Path,
) -> None:
    """No tag names 1.2: the hunks come from the files the two releases installed, and the
    transcript says why."""
    project, wheels = slowlib_project(tmp_path)
    sh(project, "git", "tag", "-d", "v1.2")
    repo = service(tmp_path, wheels, str(project))
    result, transcript = _confirmed(repo, tmp_path / "cache")
    [culprit] = result["culprits"]
    assert culprit["file"] == "slowlib/__init__.py" and "time.sleep(0.05)" in culprit["diff"]
    assert "the files the two releases installed, compared (no tag of" in transcript
    assert "names release 1.2)" in transcript


def test_tags_and_the_source_folder(tmp_path: Path) -> None:
    project, _ = slowlib_project(tmp_path)
    sh(project, "git", "tag", "slowlib-1.3", "v1.2")
    sh(project, "git", "tag", "1.4rc1", "v1.2")
    sh(project, "git", "tag", "nightly-1.2", "v1.2")  # not a release tag of slowlib
    clone = history_clone(str(project), tmp_path)
    assert history_clone(str(project), tmp_path) == clone  # cloned once
    assert release_commit(clone, "slowlib", "1.2")[0] == "v1.2"
    assert release_commit(clone, "slowlib", "1.3.0")[0] == "slowlib-1.3"
    assert release_commit(clone, "slowlib", "1.4rc1")[0] == "1.4rc1"
    assert release_commit(clone, "slowlib", "9.9") is None
    sha = release_commit(clone, "slowlib", "1.2")[1]
    assert source_root(clone, sha, ["slowlib/__init__.py"]) == "src"
    # a compiled part the tree lacks: no folder holds every installed file
    assert source_root(clone, sha, ["slowlib/__init__.py", "slowlib/_speed.so"]) is None


ASKS_FOR_A_PASSWORD = """\
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

class Asks(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="private"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

server = HTTPServer(("127.0.0.1", 0), Asks)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def _clone_in_a_terminal(url: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """history_clone(url) with a real terminal (`script`) whose input never answers."""
    clone = (
        "from pathlib import Path; from tools.stack.package_history import history_clone; "
        f"history_clone({url!r}, Path('.'))"
    )
    return subprocess.run(
        ["script", "-qec", shlex.join([sys.executable, "-c", clone]), "/dev/null"],
        stdin=subprocess.PIPE,  # open, never written: a user who is not there
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
        cwd=REPO_ROOT,
    )


def test_a_history_that_asks_for_a_password_fails_at_once(tmp_path: Path) -> None:
    """On a terminal, git asked "Username for ..." in the middle of an investigation and waited
    (600 s, unattended); it now fails at once with git's reason. `script` gives the clone a
    real terminal, whose input never answers."""
    server = subprocess.Popen(
        [sys.executable, "-c", ASKS_FOR_A_PASSWORD], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{server.stdout.readline().strip()}/private.git"
        done = _clone_in_a_terminal(url, {"XDG_CACHE_HOME": str(tmp_path / "cache")})
    finally:
        server.kill()
        server.wait()
    assert "terminal prompts disabled" in done.stdout, done.stdout[-2000:]
    assert "\nUsername for" not in "\n" + done.stdout  # git's prompt starts a line


def test_a_history_over_ssh_from_a_new_host_fails_at_once(sshd: Sshd, tmp_path: Path) -> None:
    """ssh asked "Are you sure you want to continue connecting?" on the terminal itself
    (/dev/tty, not stdin) and the investigation waited on it."""
    url = f"ssh://{sshd.user}@127.0.0.1:{sshd.port}/private.git"
    home = tmp_path / "home"  # no known host, no key: ssh has only the terminal to ask
    home.mkdir()
    done = _clone_in_a_terminal(url, {"HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert "Host key verification failed.; fatal: Could not read from remote" in done.stdout, (
        done.stdout[-2000:]
    )
    assert "continue connecting" not in done.stdout
