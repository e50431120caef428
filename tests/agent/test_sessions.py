"""Sessions for review: replay, report (HTML in a real Chromium), resume after SIGKILL."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import REPO_ROOT, assert_one_line_error, bench_repo, run_cli, wait_gone
from tools.errors import ToolError
from tools.lab.create import create_lab


def _sessions() -> Path:
    return Path(os.environ["DEBUG_AGENT_SESSIONS_DIR"])


def _finished_session(tmp_path: Path) -> str:
    done = run_cli("investigate", "--symptom", "verify 29ms", "--json", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)["session"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _finished_session(tmp_path_factory.mktemp("work"))


def test_sessions_lists_it(finished: str) -> None:
    done = run_cli("sessions", "--dir", str(_sessions()))
    assert done.returncode == 0 and finished[:11] in done.stdout


def test_sessions_reads_a_transcript_only_as_far_as_it_needs(finished: str, tmp_path: Path) -> None:
    """Listing read every transcript whole into models (19 s and 2 GB for one of 200 MB), and
    a damaged line anywhere hid the session from the list."""
    from agent.transcript import Transcript

    copy = tmp_path / "sessions" / finished
    shutil.copytree(_sessions() / finished, copy)
    lines = (copy / "transcript.jsonl").read_text().splitlines()
    last_seq = json.loads(lines[-1])["seq"]
    with open(copy / "transcript.jsonl", "a") as out:
        out.write("not json\n" + "x" * 5000 + '\n{"seq": 10000, "node": "pla')
    assert Transcript(copy / "transcript.jsonl").seq == last_seq  # a resume numbers on from it
    (copy / "result.json").unlink()  # killed: the transcript says how far it got
    done = run_cli("sessions", "--dir", str(tmp_path / "sessions"))
    assert done.returncode == 0, done.stderr
    assert re.search(rf"{finished}\s+\S+ \S+\s+interrupted\s+6\s", done.stdout), done.stdout


def test_replay_plain_shows_every_step_with_reasons(finished: str) -> None:
    done = run_cli("replay", finished, "--plain")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("[")]
    seqs = [int(line[1:5]) for line in lines]
    assert seqs == sorted(seqs) and seqs[0] == 1
    text = done.stdout
    assert "dropped flashinfer_mla_backend" in text and "attention_backend='triton'" in text
    assert "dropped server_args" in text and "Glm4MoeForCausalLM" in text
    verdicts = run_cli("replay", finished, "--plain", "--only", "verdicts").stdout
    assert "confirmed" in verdicts and "dropped" not in verdicts
    later = run_cli("replay", finished, "--plain", "--at", "10").stdout
    assert "[   1]" not in later and "[  10]" in later


def test_replay_tolerates_a_torn_line_and_refuses_a_future_schema(
    finished: str, tmp_path: Path
) -> None:
    copy = tmp_path / finished
    shutil.copytree(_sessions() / finished, copy)
    with open(copy / "transcript.jsonl", "a") as out:
        out.write('{"seq": 999, "node": "pla')
    done = run_cli("replay", str(copy), "--plain")
    assert done.returncode == 0 and "last line was cut" in done.stdout
    lines = (copy / "transcript.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    header["schema"] = "debug-agent.transcript/99"
    (copy / "transcript.jsonl").write_text("\n".join([json.dumps(header), *lines[1:-1]]) + "\n")
    done = run_cli("replay", str(copy), "--plain")
    assert done.returncode == 1 and "newer than this debug-agent reads" in done.stderr
    # a digit that is not an ASCII one (str.isdigit says yes, int() says no)
    header["schema"] = "debug-agent.transcript/²"
    (copy / "transcript.jsonl").write_text("\n".join([json.dumps(header), *lines[1:-1]]) + "\n")
    assert_one_line_error(run_cli("replay", str(copy), "--plain"), "unknown transcript schema")


def test_replay_shows_an_edited_transcript_as_text(finished: str, tmp_path: Path) -> None:
    """A transcript is a file anyone may edit: its escapes retitled the terminal and cleared
    it, a 50 kB line filled the screen, and `--step` with stdin at its end printed "Aborted!"
    and exited 1."""
    copy = tmp_path / finished
    shutil.copytree(_sessions() / finished, copy)
    lines = (copy / "transcript.jsonl").read_text().splitlines()
    event = json.loads(lines[2])
    event["text"] = "\x1b]0;retitled\x07\x1b[2J\u202e" + "x" * 50_000
    lines[2] = json.dumps(event)
    (copy / "transcript.jsonl").write_text("\n".join(lines) + "\n")
    for args in (["--plain"], []):
        done = subprocess.run(
            [
                "script",
                "-qec",
                f"{sys.executable} -m agent replay {copy} {' '.join(args)}",
                "/dev/null",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "COLUMNS": "200"},
        )
        assert done.returncode == 0, done.stdout[-2000:]
        assert "\x1b]0;" not in done.stdout and "\u202e" not in done.stdout
        assert "\\x1b]0;retitled" in done.stdout and "more characters" in done.stdout
    stepped = subprocess.run(
        [sys.executable, "-m", "agent", "replay", str(copy), "--step"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert stepped.returncode == 0 and "Aborted" not in stepped.stderr, stepped.stderr
    assert "report" in stepped.stdout


def test_html_report_renders_in_chromium(finished: str, tmp_path: Path) -> None:
    done = run_cli("report", finished, "--html")
    assert done.returncode == 0, done.stderr
    page = Path(done.stdout.strip())
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "Chromium is needed (.ci/run installs Debian's chromium)"
    dom = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert 'id="verdict"' in dom and "confirmed" in dom
    assert 'id="chart"' in dom and "<svg" in dom and "verify_ms per launch" in dom
    assert "parallel_state" in dom
    # where the time moved: the movers table, and the GPU time's differential flame graph with
    # the split all-reduce's frames red (grown), hovered for their times in both states
    assert 'id="time-moved"' in dom and 'id="flame-gpu"' in dom and 'id="flame-cpu"' in dom
    flame = dom[dom.index('id="flame-gpu"') :]
    flame = flame[: flame.index("</figure>")]
    frames = [
        g for g in flame.split('<g class="frame">')[1:] if ":GroupCoordinator.all_reduce\n" in g
    ]
    widest = max(frames, key=lambda g: float(re.search(r'width="([\d.]+)"', g)[1]))  # type: ignore[index]
    red = re.search(r'fill="rgb\(235,(\d+),\1\)"', widest)
    assert red and int(red[1]) < 200, widest  # grown, deeply
    assert "good " in widest and "→ bad " in widest


def _descendants(pid: int) -> list[int]:
    try:
        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


@pytest.mark.parametrize(
    "marker",
    ["search: revert", "confirm: apply exactly"],
)
def test_resume_after_sigkill(marker: str, tmp_path: Path) -> None:
    lab = tmp_path / "lab"
    create_lab("seed", lab)
    before = set(p.name for p in _sessions().iterdir()) if _sessions().exists() else set()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent", "investigate", "--symptom", "verify 29ms"],
        cwd=lab,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline, session, pids = time.monotonic() + 120, None, []
    while time.monotonic() < deadline and proc.poll() is None:
        new = set(p.name for p in _sessions().iterdir()) - before if _sessions().exists() else []
        if new:
            session = _sessions() / sorted(new)[0]
            transcript = session / "transcript.jsonl"
            if transcript.exists() and marker in transcript.read_text():
                time.sleep(0.3)  # into the launch it announced
                pids = _descendants(proc.pid)
                break
        time.sleep(0.02)
    assert session is not None and proc.poll() is None, "the run ended before the marker"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = run_cli("investigate", "--resume", session.name, "--json", cwd=lab, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["status"] == "confirmed"
    assert [c["file"] for c in result["culprits"]] == [
        "python/sglang/srt/distributed/parallel_state.py"
    ]
    events = [
        json.loads(line)
        for line in (session / "transcript.jsonl").read_text().splitlines()[1:]
        if line.strip().endswith("}")
    ]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert any(e["node"] == "resume" for e in events)
    assert wait_gone(pids) == []


def test_rerun_of_the_committed_example_reproduces_its_verdict(tmp_path: Path) -> None:
    example = REPO_ROOT / "sessions" / "example-seed"
    done = run_cli("replay", str(example), "--rerun", "--dir", str(tmp_path), timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert (
        result["holds"] is True
        and result["rerun_of"] == json.loads((example / "result.json").read_text())["session"]
    )
    assert (tmp_path / result["session"] / "transcript.jsonl").exists()


def test_a_rerun_of_candidates_saved_under_masked_names_says_so(tmp_path: Path) -> None:
    """A file named like a credential is masked in everything saved, its candidate's id too:
    the re-run said "the target's candidates differ" of a target that had not changed."""
    lab = tmp_path / "lab"
    create_lab("seed", lab)
    (lab / "python" / "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789.py").write_text("X = 1\n")
    done = run_cli("investigate", "--symptom", "verify 29ms", "--json", cwd=lab, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    session = json.loads(done.stdout)["session_dir"]
    assert "AbCdEfGhIjKl" not in Path(session, "state.json").read_text()
    again = run_cli("replay", session, "--rerun", "--dir", str(tmp_path), cwd=lab)
    assert_one_line_error(again)
    assert "masked names" in again.stderr, again.stderr


def test_the_committed_example_replays_and_reports(tmp_path: Path) -> None:
    example = REPO_ROOT / "sessions" / "example-seed"
    done = run_cli("replay", str(example), "--plain")
    assert done.returncode == 0 and "confirmed" in done.stdout
    copy = tmp_path / "example"
    shutil.copytree(example, copy)
    done = run_cli("report", str(copy), "--html")
    assert done.returncode == 0 and Path(done.stdout.strip()).exists()


def _checkpointed(sessions: Path) -> bool:
    """A session folder there holds its first checkpoint (its database is made before it)."""
    from agent.session import saved_values

    for database in sessions.glob("*/checkpoints.sqlite"):
        with contextlib.suppress(ToolError, sqlite3.Error):
            return bool(saved_values(database.parent))
    return False


def test_a_session_runs_in_one_process_at_a_time(tmp_path: Path) -> None:
    """A second `--resume` of a session that is running stops at once with one line naming
    the first (both went on from the checkpoint: each launch twice, the transcript's numbers
    repeated); once that process is gone, however it ended, the session resumes."""
    bench = "import time\ntime.sleep(0.5)\nprint('latency_ms: 5')\n"
    repo = bench_repo(tmp_path, bench)
    sessions = tmp_path / "sessions"
    env = {**os.environ, "DEBUG_AGENT_SESSIONS_DIR": str(sessions)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent", "investigate", "--symptom", "latency 9ms (was 5)"],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _checkpointed(sessions):
        time.sleep(0.05)
    session = next(sessions.glob("*/checkpoints.sqlite")).parent
    try:
        second = run_cli("investigate", "--resume", session.name, cwd=repo, env=env)
        assert_one_line_error(second, f"is running in another process (pid {proc.pid})")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    done = run_cli("investigate", "--resume", session.name, "--json", cwd=repo, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    events = [
        json.loads(line)
        for line in (session / "transcript.jsonl").read_text().splitlines()[1:]
        if line.strip().endswith("}")
    ]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))


def test_a_running_session_before_its_first_checkpoint_is_named_running(tmp_path: Path) -> None:
    """A resume read the checkpoint before the lock: a session that had not yet written its
    first checkpoint (CI, under load) read as one with none to resume from."""
    folder = tmp_path / "sessions" / "20261207-000000-abcdef"
    folder.mkdir(parents=True)
    (folder / "checkpoints.sqlite").touch()
    (folder / "transcript.jsonl").write_text(
        '{"kind": "header", "schema": "debug-agent.transcript/1", "session": "x"}\n'
    )
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            f"f = open({str(folder / 'session.lock')!r}, 'a+')\n"
            "fcntl.flock(f, fcntl.LOCK_EX)\nf.write(f'{os.getpid()}\\n'); f.flush()\n"
            "print('held', flush=True); time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        for command in (["investigate", "--resume"], ["chat", "--resume"]):
            done = run_cli(*command, str(folder), cwd=tmp_path)
            assert_one_line_error(done, f"is running in another process (pid {holder.pid})")
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        ("bytes", "file is not a database"),
        ("UPDATE checkpoints SET checkpoint = x'deadbeef00ff'", "checkpoints.sqlite cannot be"),
        ("UPDATE checkpoints SET type = 'pickle'", "Unknown serialization type: pickle"),
        ("UPDATE stored_texts SET text = 'garbage'", "validation error"),
    ],
)
def test_a_damaged_checkpoint_is_one_line_never_an_internal_error(
    damage: str, says: str, finished: str, tmp_path: Path
) -> None:
    """Each was an internal error; a checkpoint that names an unknown serializer (pickle) is
    never loaded by it."""
    copy = tmp_path / finished
    shutil.copytree(_sessions() / finished, copy)
    if damage == "bytes":
        (copy / "checkpoints.sqlite").write_bytes(os.urandom(100))
    else:
        with contextlib.closing(sqlite3.connect(copy / "checkpoints.sqlite")) as db:
            db.execute(damage)
            db.commit()
    done = run_cli("investigate", "--resume", str(copy))
    assert_one_line_error(done, "cannot be resumed", says, f"debug-agent replay {finished}")
    assert run_cli("replay", str(copy), "--plain").returncode == 0


def test_a_session_folder_with_links_never_writes_through_them(
    finished: str, tmp_path: Path
) -> None:
    """A session folder from elsewhere (a tarball sent for review): `report --html` wrote its
    page through a report.html linked to a file of the user's, and a resume truncated the
    target of a linked session.lock. A file written whole replaces the link; one appended to
    or locked is one line."""
    precious = tmp_path / "precious.txt"
    precious.write_text("the user's own\n")
    copy = tmp_path / finished
    shutil.copytree(_sessions() / finished, copy)
    (copy / "report.html").unlink(missing_ok=True)
    (copy / "report.html").symlink_to(precious)
    assert run_cli("report", "--html", str(copy)).returncode == 0
    assert not (copy / "report.html").is_symlink()
    assert "<html" in (copy / "report.html").read_text()
    (copy / "session.lock").unlink()
    (copy / "session.lock").symlink_to(precious)
    done = run_cli("investigate", "--resume", str(copy), "--max-launches", "60")
    assert_one_line_error(done, f"{copy / 'session.lock'} is a symbolic link")
    assert precious.read_text() == "the user's own\n"
