"""Never abort: a configuration that cannot run is unresolved (recorded with its error and log,
never a value), a flaky start-up is retried once, references that cannot run end with status
`error` and a report, and so does an error of ours."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.conftest import make_repo, run_cli, sh
from tests.tools.test_generic_target import BENCH
from tests.tools.test_generic_target import CONFIG as GENERIC_CONFIG

SERVER = textwrap.dedent("""\
    import os, sys, time
    from http.server import BaseHTTPRequestHandler, HTTPServer

    flaky = os.environ.get("FLAKY_STARTS")
    if flaky:  # every other start-up fails before the server listens
        from pathlib import Path
        counter = Path(flaky)
        starts = int(counter.read_text()) + 1 if counter.exists() else 1
        counter.write_text(str(starts))
        if starts % 2 == 1:
            sys.exit("flaky start-up: could not initialise the device")
    span = os.environ.get("FAILED_STARTS")  # "path:first-last": those start-ups fail
    if span:
        from pathlib import Path
        path, numbers = span.rsplit(":", 1)
        first, last = map(int, numbers.split("-"))
        counter = Path(path)
        starts = int(counter.read_text()) + 1 if counter.exists() else 1
        counter.write_text(str(starts))
        if first <= starts <= last:
            sys.exit("flaky start-up: the bootstrap lost a race")

    from work import cost_ms

    class H(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/work":
                time.sleep(cost_ms() / 1000)
            self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers()
            self.wfile.write(b"ok")
        def log_message(self, *args): pass

    HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
""")
WORK = "import os\n\n\ndef cost_ms():\n    base = 10.0\n    return base\n" + "".join(
    f"\n\ndef unused_{i}():\n    return {i}\n" for i in range(12)
)
CONFIG = GENERIC_CONFIG + 'per_launch = "best"\n'


def _target(tmp_path: Path, config: str = CONFIG) -> Path:
    repo = make_repo(tmp_path, {"server.py": SERVER, "work.py": WORK, "bench.py": BENCH})
    (repo / "debug-agent.toml").write_text(config)
    sh(repo, "git", "add", "debug-agent.toml")
    sh(repo, "git", "commit", "-qm", "config")
    sh(repo, "git", "tag", "-f", "good")
    return repo


def _investigate(repo: Path, *extra: str, env: dict[str, str] | None = None) -> dict:
    done = run_cli(
        "investigate", "--symptom", "latency 30ms", "--json", *extra, cwd=repo, env=env, timeout=300
    )
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    result = json.loads(done.stdout)
    folder = Path(result["session_dir"])
    assert (folder / "report.md").exists() and (folder / "result.json").exists()
    return result


def _events(result: dict) -> list[dict]:
    path = Path(result["session_dir"]) / "transcript.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_hunk_that_needs_a_module_another_adds_is_unresolved_alone(tmp_path: Path) -> None:
    """The culprit imports a module the bad state adds, by a computed name that reading the
    code cannot link: the good state plus the culprit alone cannot start
    (ModuleNotFoundError). That configuration is recorded as unresolved, with the server's last
    lines and its log, and the search goes on: never a wrong culprit."""
    repo = _target(tmp_path)
    (repo / "fastmath.py").write_text("def factor():\n    return 3.0\n")
    work = (repo / "work.py").read_text()
    dynamic = 'import importlib\n\nfactor = importlib.import_module("fast" + "math").factor\n'
    work = work.replace("import os\n", "import os\n" + dynamic)
    work = work.replace("return base\n", "return base * factor()\n")
    (repo / "work.py").write_text(work.replace("return 7\n", "return 7 + 0\n"))
    result = _investigate(repo)
    named = {c["file"] for c in result["culprits"]}
    assert named <= {"work.py", "fastmath.py"}, result
    assert result["status"] in ("confirmed", "suspected", "inconclusive"), result["notes"]
    failed = [e for e in _events(result) if e["kind"] == "error" and "unresolved" in e["text"]]
    assert failed, "no configuration without the module was tried"
    for event in failed:
        assert "ModuleNotFoundError" in "\n".join(event["payload"]["tail"]) + event["text"]
        assert "log:" in event["text"]
    assert [u["stage"] for u in result["unresolved"]] == ["start"] * len(failed)


def test_a_flaky_start_up_is_retried_once_and_counted(tmp_path: Path) -> None:
    repo = _target(tmp_path)
    work = (repo / "work.py").read_text()
    (repo / "work.py").write_text(work.replace("return base\n", "return base * 3\n"))
    counter = tmp_path / "starts"
    result = _investigate(repo, env={"FLAKY_STARTS": str(counter)})
    assert result["status"] == "confirmed", result["notes"]
    assert [c["file"] for c in result["culprits"]] == ["work.py"]
    retried = [e for e in _events(result) if "start-up failed once" in e.get("text", "")]
    assert retried and "could not initialise the device" in retried[0]["text"]
    assert result["unresolved"] == []


def test_a_reference_of_a_flaky_server_gets_a_third_launch(tmp_path: Path) -> None:
    """The bad reference started; the good one failed four start-ups in a row (two launches,
    each a start and its retry): on a server that starts at all, that is bad luck, not a
    state that cannot run, and everything hinges on the reference."""
    repo = _target(tmp_path)
    work = (repo / "work.py").read_text()
    (repo / "work.py").write_text(work.replace("return base\n", "return base * 3\n"))
    result = _investigate(repo, env={"FAILED_STARTS": f"{tmp_path / 'starts'}:2-5"})
    assert result["status"] == "confirmed", result["notes"]
    assert [c["file"] for c in result["culprits"]] == ["work.py"]
    assert [(u["config"], u["stage"]) for u in result["unresolved"]] == [("good", "start")] * 2


def test_references_that_cannot_run_end_with_status_error_and_a_report(tmp_path: Path) -> None:
    repo = _target(tmp_path, CONFIG.replace('"latency_ms: ([0-9.]+)"', '"never_printed: ([0-9]+)"'))
    (repo / "work.py").write_text((repo / "work.py").read_text().replace("10.0", "30.0"))
    result = _investigate(repo)
    assert result["status"] == "error"
    assert result["culprits"] == [] and result["unresolved"][0]["stage"] == "bench"
    assert "cannot run" in " ".join(result["notes"])
    report = (Path(result["session_dir"]) / "report.md").read_text()
    assert "error" in report.splitlines()[0] and "unresolved" in report


def test_an_error_of_ours_still_ends_with_a_result_and_report(tmp_path: Path) -> None:
    from agent.session import Session

    repo = _target(tmp_path)
    (repo / "work.py").write_text((repo / "work.py").read_text().replace("10.0", "30.0"))
    with Session.start(repo, "latency 30ms", tmp_path / "sessions") as session:
        try:
            raise RuntimeError("a bug of ours\nwith a second line")
        except RuntimeError as error:
            result = session.fail(error)
    folder = Path(result["session_dir"])
    assert result["status"] == "error"
    assert "RuntimeError: a bug of ours" in result["notes"][-1]
    assert "Traceback" in (folder / "error.txt").read_text()
    assert json.loads((folder / "result.json").read_text())["status"] == "error"
    events = [json.loads(line) for line in (folder / "transcript.jsonl").read_text().splitlines()]
    assert events[-1]["node"] == "report"
