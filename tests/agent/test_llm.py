"""The LLM reasoner against a real local OpenAI-compatible server with scripted answers."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import run_cli
from tools.proc.server import free_port

FLASHINFER = "flashinfer_mla_backend-0cac36"
CULPRIT = "parallel_state-2ce853"
SECRET = "sk-plantedsecret0123456789"


@pytest.fixture()
def scripted_endpoint(tmp_path: Path):
    def start(script: list[dict]) -> tuple[str, Path]:
        (tmp_path / "script.json").write_text(json.dumps(script))
        port, log = free_port(), tmp_path / "requests.log"
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agent.llm.script_server",
                str(tmp_path / "script.json"),
                "--port",
                str(port),
                "--requests-log",
                str(log),
            ]
        )
        procs.append(proc)
        url = f"http://127.0.0.1:{port}/v1"
        for _ in range(100):
            try:
                httpx.get(url + "/models", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.05)
        return url, log

    procs: list[subprocess.Popen] = []
    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


def _rank(weights: dict[str, float]) -> dict:
    return {
        "tool_calls": [
            {
                "name": "set_priors",
                "arguments": {
                    "rankings": [
                        {"candidate": cid, "weight": w, "reason": f"the model's view of {cid}"}
                        for cid, w in weights.items()
                    ]
                },
            }
        ]
    }


def _investigate(cwd: Path, url: str) -> dict:
    done = run_cli(
        "investigate",
        "--symptom",
        "verify 29ms",
        "--json",
        "--llm-base-url",
        url,
        "--llm-model",
        "scripted",
        cwd=cwd,
        timeout=300,
        env={"OPENAI_API_KEY": SECRET},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_a_model_that_insists_on_flashinfer_is_refuted_by_measurement(
    scripted_endpoint, tmp_path: Path
) -> None:
    narrative = {
        "tool_calls": [
            {
                "name": "write_summary",
                "arguments": {
                    "text": "The all-reduce split in parallel_state.py slows every verify by 10 ms."
                },
            }
        ]
    }
    url, requests = scripted_endpoint([_rank({FLASHINFER: 10, CULPRIT: 1}), narrative])
    result = _investigate(tmp_path, url)
    assert result["llm"]["narrative"].startswith("The all-reduce split")
    assert "## Narrative" in (Path(result["session_dir"]) / "report.md").read_text()
    assert result["status"] == "confirmed"
    assert [c["id"] for c in result["culprits"]] == [CULPRIT]
    claim = result["llm"]["claims"][0]
    assert claim["candidate"] == FLASHINFER and claim["status"] == "refuted"
    assert any("still holds" in e and "restored" in e for e in claim["evidence"])
    session = Path(result["session_dir"])
    for path in session.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(errors="replace"), path
    assert SECRET not in requests.read_text()  # nor in what the model was shown
    # the same answers, played back from the session instead of an endpoint
    done = run_cli(
        "investigate",
        "--symptom",
        "verify 29ms",
        "--json",
        "--llm-replay",
        str(session),
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    replayed = json.loads(done.stdout)
    assert replayed["llm"]["claims"][0]["status"] == "refuted"
    assert replayed["llm"]["narrative"] == result["llm"]["narrative"]


def test_bad_answers_are_recovered_from(scripted_endpoint, tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"
    url, _ = scripted_endpoint(
        [
            {"http_status": 500},
            {"content": ""},
            {"tool_calls": [{"name": "run_shell", "arguments": {"cmd": f"touch {pwned}"}}]},
            {"tool_calls": [{"name": "set_priors", "arguments": '{"rankings": [{"cand'}]},
            _rank({CULPRIT: 9}),
        ]
    )
    result = _investigate(tmp_path, url)
    assert result["status"] == "confirmed" and result["llm"]["calls"] >= 5
    events = [
        json.loads(line)
        for line in (Path(result["session_dir"]) / "transcript.jsonl").read_text().splitlines()[1:]
    ]
    errors = " | ".join(e["text"] for e in events if e["kind"] == "error")
    for needle in ("HTTP 500", "no tool call", "unknown tool 'run_shell'", "invalid"):
        assert needle in errors
    assert any(e["text"].startswith(f"model ranks {CULPRIT}") for e in events)
    assert not pwned.exists()  # a tool the model invents runs nothing


def test_a_model_that_never_answers_well_leaves_the_rules_in_charge(
    scripted_endpoint, tmp_path: Path
) -> None:
    url, _ = scripted_endpoint([{"content": "I think it is the flashinfer change."}])
    result = _investigate(tmp_path, url)
    assert result["status"] == "confirmed" and result["llm"]["claims"] == []
    events = (Path(result["session_dir"]) / "transcript.jsonl").read_text()
    assert "the rules reasoner's priors stand" in events


def test_chat_free_text_goes_to_the_model_and_its_tools_are_validated(
    scripted_endpoint, tmp_path: Path
) -> None:
    from tools.lab.create import create_lab

    url, _ = scripted_endpoint(
        [
            {
                "content": "flashinfer_mla_backend.py was never imported, so it cannot matter.",
                "tool_calls": [
                    {
                        "name": "drop_hypothesis",
                        "arguments": {
                            "candidate": "engine-3dcdd1",
                            "reason": "it only sets NCCL variables",
                        },
                    },
                    {"name": "rm_rf", "arguments": {"path": "/"}},
                ],
            },
            _rank({CULPRIT: 9}),
            {"tool_calls": [{"name": "write_summary", "arguments": {"text": "Done."}}]},
        ]
    )
    lab = tmp_path / "lab"
    create_lab("seed", lab)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent",
            "chat",
            "--symptom",
            "verify 29ms",
            "--yes",
            "--llm-base-url",
            url,
            "--llm-model",
            "scripted",
        ],
        cwd=lab,
        timeout=300,
        input="why is the flashinfer change not suspicious?\n/run\n/hypotheses\n/quit\n",
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "was never imported, so it cannot matter" in out
    assert "unknown tool 'rm_rf' ignored" in out
    assert "drop engine-3dcdd1: applied at the next /run" in out
    assert "engine-3dcdd1  dropped" in out and "confirmed: /report" in out


def test_the_model_picks_among_the_planners_experiments(scripted_endpoint, tmp_path: Path) -> None:
    choose_second = {
        "tool_calls": [
            {
                "name": "choose_experiment",
                "arguments": {"option": 2, "reason": "rule out the NCCL patches first"},
            }
        ]
    }
    summary = {"tool_calls": [{"name": "write_summary", "arguments": {"text": "Done."}}]}
    url, _ = scripted_endpoint([_rank({CULPRIT: 5}), choose_second, summary])
    result = _investigate(tmp_path, url)
    assert result["status"] == "confirmed"
    assert [c["id"] for c in result["culprits"]] == [CULPRIT]
    events = (Path(result["session_dir"]) / "transcript.jsonl").read_text()
    assert "the model chose option 2: rule out the NCCL patches first" in events


def test_an_endpoint_that_never_answers_is_asked_once(tmp_path: Path) -> None:
    """An endpoint that takes connections and never answers was asked again and again, each
    call waiting its whole timeout: a 6-second investigation took over a quarter of an hour."""
    from tools.lab.create import create_lab

    lab = tmp_path / "lab"
    create_lab("seed", lab)
    with (lab / "debug-agent.toml").open("a") as config:
        config.write("\n[llm]\ntimeout_s = 1\n")
    with socket.create_server(("127.0.0.1", 0)) as silent:  # the kernel accepts; none answers
        result = _investigate(lab, f"http://127.0.0.1:{silent.getsockname()[1]}/v1")
    assert result["status"] == "confirmed"
    events = (Path(result["session_dir"]) / "transcript.jsonl").read_text()
    assert events.count("model call failed") == 1, events
    assert "gave no answer in 1 s; the rules reasoner goes on alone" in events


TRICKLE = """
import sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class H(BaseHTTPRequestHandler):
    def do_POST(self):  # a reply begun, then a few bytes every 10 ms, without end
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.end_headers(); self.wfile.write(b'{"id": "x", "choices": [')
        while True:
            self.wfile.write(b" " * 100); self.wfile.flush(); time.sleep(0.01)
    def log_message(self, *args): pass

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def _wait_listening(port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)


def test_an_endpoint_that_answers_without_end_is_given_up_in_time(tmp_path: Path) -> None:
    """The client's timeout is per read: a body that never ends hung the investigation."""
    from tools.lab.create import create_lab
    from tools.proc.server import free_port

    lab = tmp_path / "lab"
    create_lab("seed", lab)
    with (lab / "debug-agent.toml").open("a") as config:
        config.write("\n[llm]\ntimeout_s = 2\n")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", TRICKLE, str(port)], stderr=subprocess.DEVNULL)
    try:
        _wait_listening(port)  # before the first call, however busy the machine
        result = _investigate(lab, f"http://127.0.0.1:{port}/v1")
    finally:
        server.kill()
        server.wait()
    assert result["status"] == "confirmed"
    events = (Path(result["session_dir"]) / "transcript.jsonl").read_text()
    assert "gave no answer in 2 s; the rules reasoner goes on alone" in events


ODD_REPLIES = """
import itertools, json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CALL = {"id": "c1", "type": "function", "function": {"name": "rank_candidates", "arguments": 5}}
REPLIES = itertools.cycle([
    {"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "tool_calls": [CALL]}}]},
    {"choices": "x"},
    [1, 2],
    {"id": "x", "choices": [{"message": {"content": "hi"}}], "usage": {"prompt_tokens": -5}},
    '{"id": "x", "choices": [{"message": {"content": ' + "[" * 100000 + "]" * 100000 + "}}]}",
])

class H(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        reply = next(REPLIES)  # text is sent as it is
        body = (reply if isinstance(reply, str) else json.dumps(reply)).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args): pass

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def test_replies_that_are_no_chat_completion_are_failed_calls(tmp_path: Path) -> None:
    """A number for a call's arguments, choices that are a string, a list for the reply, a
    negative token count, a reply nested 100,000 deep: each stopped the investigation (an
    AttributeError, a pydantic error, a RecursionError in the SDK's json.loads); they are failed
    calls, and the rules reasoner goes on."""
    from tools.lab.create import create_lab
    from tools.proc.server import free_port

    lab = tmp_path / "lab"
    create_lab("seed", lab)
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", ODD_REPLIES, str(port)])
    try:
        _wait_listening(port)
        result = _investigate(lab, f"http://127.0.0.1:{port}/v1")
    finally:
        server.kill()
        server.wait()
    assert result["status"] == "confirmed", result
    events = (Path(result["session_dir"]) / "transcript.jsonl").read_text()
    assert "reply is no chat completion" in events
    assert "reply is nested too deep to read" in events
