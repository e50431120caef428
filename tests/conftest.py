"""Shared fixtures: real labs in temp folders, the real CLI in a subprocess."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from textwrap import dedent

import psutil
import pytest

from agent.state import InvestigationState
from agent.symptom import parse_symptom
from tools.lab.changes import Change
from tools.lab.create import create_lab

pytest_plugins = ["tests.node.sshd"]  # the real sshd fixtures, for the SSH tests

REPO_ROOT = Path(__file__).resolve().parent.parent

# A suite started in the background (bash ignores SIGINT for an `&` job) would hand every child
# an ignored Ctrl-C, and the tests that send one would test nothing: a caught signal is reset
# to its default in each child the suite starts.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True, scope="session")
def _state_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Keep lab truths, pidfiles and sessions out of the user's home during tests, and seed the
    labs' noise: each launch draws its own noise from its name, so a lab investigation gives the
    same launches on every run (an engine's error rate under noise is lab bench's to measure)."""
    os.environ.setdefault("SGLANG_LAB_SEED", "17")
    os.environ["DEBUG_AGENT_LAB_TRUTH_DIR"] = str(tmp_path_factory.mktemp("truth"))
    os.environ["DEBUG_AGENT_STATE_DIR"] = str(tmp_path_factory.mktemp("state"))
    os.environ["DEBUG_AGENT_SESSIONS_DIR"] = str(tmp_path_factory.mktemp("sessions"))


@pytest.fixture(scope="session")
def seed_lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One seed lab for the session; tests must not change it (copy it first)."""
    lab = tmp_path_factory.mktemp("labs") / "seed"
    create_lab("seed", lab)
    return lab


def run_cli(
    *args: str, cwd: Path | None = None, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agent", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        errors="surrogateescape",  # a path that is not UTF-8 is printed as its bytes
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def investigate_seed(
    lab: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    """`debug-agent investigate --symptom "verify 29ms" --json ARGS` in a seed lab."""
    return run_cli(
        "investigate",
        "--symptom",
        "verify 29ms",
        "--json",
        *args,
        cwd=lab,
        timeout=timeout,
        env=env,
    )


def tiny_server(on_post: str) -> str:
    """A server script (argv: PORT [ARG]): GET answers "ok"; POST runs `on_post`, Python lines
    with `os`, `sys` and `time` imported (e.g. hang, crash, or answer)."""
    body = "\n".join("        " + line for line in on_post.strip().splitlines())
    return (
        "import os, sys, time\n"
        "from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer\n\n"
        "class H(BaseHTTPRequestHandler):\n"
        "    def do_GET(self):\n"
        "        self.send_response(200); self.send_header('Content-Length', '2')\n"
        "        self.end_headers(); self.wfile.write(b'ok')\n"
        f"    def do_POST(self):\n{body}\n"
        "    def log_message(self, *args): pass\n\n"
        "ThreadingHTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()\n"
    )


def live_pids(pids: list[int]) -> list[int]:
    """The pids that still run (a zombie has exited: only its status is left)."""
    alive = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.NoSuchProcess:
            continue
    return alive


def wait_gone(pids: list[int], seconds: float = 5.0) -> list[int]:
    """Wait up to `seconds` for `pids` to end; return those still running."""
    deadline = time.monotonic() + seconds
    while live_pids(pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return live_pids(pids)


def lab_copy_reverting(lab: Path, tmp_path: Path, changes: list[Change]) -> Path:
    """A copy of `lab` with `changes` undone in its working tree (the lab is not touched)."""
    copy = tmp_path / f"lab-{len(list(tmp_path.iterdir()))}"
    shutil.copytree(lab, copy, ignore=shutil.ignore_patterns("__pycache__", ".debug-agent-logs"))
    for change in changes:
        if not change.old:  # a new file: undoing it removes it
            (copy / change.file).unlink()
            continue
        Change(**{**change.model_dump(), "old": change.new, "new": change.old}).apply(copy)
    return copy


def git(repo: Path, *args: str) -> str:
    """A git command in `repo`; its output, stripped."""
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def only_main_worktree(repo: Path) -> bool:
    """No scratch worktree is left: `git worktree list` shows the main one alone."""
    listing = subprocess.run(
        ["git", "-C", str(repo), "worktree", "list"], capture_output=True, text=True, check=True
    ).stdout
    return listing.count("\n") == 1


def repo_fingerprint(repo: Path) -> str:
    """Everything of a repository the user owns: tree files, index, HEAD, refs, stash."""
    digest = hashlib.sha256()
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo)
        if rel.parts[0] == ".git" or "__pycache__" in rel.parts or not path.is_file():
            continue
        digest.update(str(rel).encode() + b"\0" + path.read_bytes() + b"\0")
        digest.update(str(path.stat().st_mode).encode())
    git_dir = repo / ".git"
    for name in ("index", "HEAD", "packed-refs", "config"):
        if (git_dir / name).exists():
            digest.update(name.encode() + (git_dir / name).read_bytes())
    for path in sorted((git_dir / "refs").rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(git_dir)).encode() + path.read_bytes())
    for name in ("logs/refs/stash",):
        if (git_dir / name).exists():
            digest.update((git_dir / name).read_bytes())
    return digest.hexdigest()


def sh(cwd: Path, *args: str) -> str:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=True).stdout


def make_repo(tmp_path: Path, files: dict[str, str] | None = None) -> Path:
    """A git repository with one commit (tagged `good`) of `files` (default: two small ones)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    sh(repo, "git", "init", "-q", "-b", "main")
    sh(repo, "git", "config", "user.email", "t@example.invalid")
    sh(repo, "git", "config", "user.name", "t")
    files = files or {"a.py": "".join(f"line {i}\n" for i in range(1, 41)), "b.py": "x = 1\n"}
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-qm", "good")
    sh(repo, "git", "tag", "good")
    return repo


def bench_repo(tmp_path: Path, bench: str) -> Path:
    """A repository whose one change (x.py) is measured by `bench` (a Python script printing
    `latency_ms: <value>` lines), as a command bench."""
    repo = make_repo(tmp_path, {"bench.py": bench, "x.py": "X = 1\n"})
    (repo / "x.py").write_text("X = 2\n")
    (repo / "debug-agent.toml").write_text(
        "[bench]\nkind = 'command'\ncommand = '{python} bench.py'\nmetric = 'latency_ms'\n"
        "metric_regex = 'latency_ms: (\\S+)'\n"
    )
    return repo


def assert_one_line_error(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    """A clear one-line error (`error: ...`), a non-zero exit and no traceback."""
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ")
    for needle in needles:
        assert needle in lines[0], lines[0]


# the longest tests (a minute or more each): started first, so that no worker is left with one
# of them at the end while the others are done
LONGEST = ("test_transformers_lab.py", "test_tp_lab.py", "test_real_bundles.py")
LINT_TESTS = REPO_ROOT / "tests" / "test_lint.py"
MYPY_RUN = "DEBUG_AGENT_TEST_MYPY"  # the folder of the one mypy run: its output, then its rc


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The longest tests first."""
    items.sort(key=lambda item: not any(name in item.nodeid for name in LONGEST))


def pytest_configure(config: pytest.Config) -> None:
    """mypy takes many seconds of CPU and the suite leaves a core idle at times: where the mypy
    test will run, mypy starts now, once for the whole run (here, before any worker starts;
    they find it through the environment), beside the other tests, and the test reads its
    answer."""
    if hasattr(config, "workerinput") or not _selects(config, LINT_TESTS):
        return
    folder = Path(tempfile.mkdtemp(prefix="debug-agent-mypy-"))
    folder_files = (folder / "cache", folder / "output", folder / "rc")
    python, cache, output, rc = (shlex.quote(str(p)) for p in (sys.executable, *folder_files))
    command = f"{python} -m mypy --cache-dir {cache} agent tools > {output} 2>&1; echo $? > {rc}"
    process = subprocess.Popen(["sh", "-c", command], cwd=REPO_ROOT, start_new_session=True)
    os.environ[MYPY_RUN] = str(folder)
    config.stash[MYPY] = (process, folder)


def pytest_unconfigure(config: pytest.Config) -> None:
    started = config.stash.get(MYPY, None)
    if started is not None:
        process, folder = started
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # an interrupted run leaves no mypy behind
        process.wait()
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(MYPY_RUN, None)


def _selects(config: pytest.Config, test_file: Path) -> bool:
    """Whether the run's arguments include `test_file` (itself, or a folder above it)."""
    given = [a.split("::")[0] for a in config.args] or [str(config.invocation_params.dir)]
    for arg in given:
        path = (config.invocation_params.dir / arg).resolve()
        if path == test_file or path in test_file.parents:
            return True
    return False


MYPY = pytest.StashKey[tuple[subprocess.Popen[bytes], Path]]()


def _machine_lock(factory: pytest.TempPathFactory, mode: int) -> Iterator[None]:
    """One lock file for the whole run (xdist's workers share their basetemp's parent)."""
    base = factory.getbasetemp()
    folder = base.parent if base.name.startswith("popen-gw") else base
    with (folder / "cpu-heavy.lock").open("a") as lock:
        fcntl.flock(lock, mode)
        yield


@pytest.fixture
def many_processes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A test that keeps several CPU-bound processes busy (the torch labs): they may run
    together, never beside a test that judges real timings of a 1 ms bench."""
    yield from _machine_lock(tmp_path_factory, fcntl.LOCK_SH)


@pytest.fixture
def steady_timings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A test whose verdict rides on real timings at the millisecond (the real bundles): it
    waits until no `many_processes` test runs. Beside the tp lab's two ranks on 2 cores,
    werkzeug's 1 ms fast end moved to 1.4-2.2 ms between launches (docs/real-runs.md)."""
    yield from _machine_lock(tmp_path_factory, fcntl.LOCK_EX)


@pytest.fixture
def mypy_answer() -> tuple[int, str]:
    """mypy's exit status and output: of the run started with the session (pytest_configure),
    or, where none was, of a run now."""
    folder = os.environ.get(MYPY_RUN)
    if folder is None:
        done = subprocess.run(
            [sys.executable, "-m", "mypy", "agent", "tools"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
        )
        return done.returncode, done.stdout + done.stderr
    rc = Path(folder) / "rc"
    deadline = time.monotonic() + 600
    while not rc.exists() or not rc.read_text().strip():
        assert time.monotonic() < deadline, "mypy did not finish in 10 minutes"
        time.sleep(0.5)
    return int(rc.read_text()), (Path(folder) / "output").read_text()


def write_package(folder: Path, files: dict[str, str], name: str = "pkg") -> Path:
    """A Python package `folder/<name>` holding `files` (path in the package -> text,
    dedented)."""
    pkg = folder / name
    for rel, text in {"__init__.py": "", **files}.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(dedent(text).lstrip())
    return pkg


def bare_state(symptom: str = "verify 29ms", **fields: object) -> InvestigationState:
    """An investigation's state with nothing measured yet, for the engine's pure functions."""
    base: dict[str, object] = {
        "session_id": "s",
        "session_dir": "/nonexistent",
        "config_path": "x",
        "symptom": parse_symptom(symptom),
        "metric": "verify_ms",
        "worse": "higher",
        "max_launches": 30,
        "deadline": 0.0,
    }
    return InvestigationState.model_validate({**base, **fields})


def measured(state: InvestigationState, ids: set[str], values: list[float]) -> str:
    """The config holding exactly `ids` with launches of `values` added (for the engine's pure
    functions); its key."""
    from agent.levels import ensure_config
    from agent.state import Launch

    key = ensure_config(state, ids).key
    for value in values:
        state.next_request += 1
        launch = Launch(value=value, samples=[value], log="", request=state.next_request)
        state.configs[key].launches.append(launch)
    return key


def confirming(
    symptom: str, ids: list[str], bad: list[float], good: list[float], found: list[str]
) -> InvestigationState:
    """A state whose search found `found` among the hunks `ids` (file `<id>.py` each), the
    references measured at `bad` and `good`: the confirmation started."""
    from agent.phases import confirm
    from agent.state import Finding
    from tools.repo.candidates import Candidate

    state = bare_state(symptom)
    state.candidates = [Candidate(kind="hunk", id=cid, file=f"{cid}.py", patch="") for cid in ids]
    state.bad_key = measured(state, set(ids), bad)
    state.good_key = measured(state, set(), good)
    state.findings = [Finding(ids=found, low_key=state.bad_key, high_key=state.good_key)]
    confirm.start(state)
    return state
