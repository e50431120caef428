"""Server lifecycle, worker env and the benchmark kinds, against the real lab server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import (
    REPO_ROOT,
    assert_one_line_error,
    make_repo,
    run_cli,
    tiny_server,
    wait_gone,
)
from tools.bench import command
from tools.bench.command import run_command_bench
from tools.bench.serving import BenchError, run_http_bench
from tools.config import BenchSection, load_config
from tools.node.nodes import LocalNode
from tools.proc.server import free_port, running_server
from tools.proc.worker_env import WorkerEnv, worker_env
from tools.secrets import MASK, learn_command, mask

WHO = "scheduler processes"  # what env_arrival counted


def _lab_server(lab: Path, tmp_path: Path):
    config = load_config(lab)
    port = free_port()
    return running_server(
        config.launch_argv(port),
        lab,
        config.launch.env,
        port,
        tmp_path / "server.log",
        timeout_s=60,
    )


def test_exception_in_the_caller_stops_every_process(seed_lab: Path, tmp_path: Path) -> None:
    pids: list[int] = []
    with pytest.raises(RuntimeError, match="caller failed"), _lab_server(seed_lab, tmp_path) as s:
        pids = [s.pid] + [p.pid for p in psutil.Process(s.pid).children(recursive=True)]
        assert len(pids) >= 9
        raise RuntimeError("caller failed")
    assert wait_gone(pids) == []


def test_worker_env_sees_sitecustomize_in_the_schedulers(seed_lab: Path, tmp_path: Path) -> None:
    with _lab_server(seed_lab, tmp_path) as server:
        report = worker_env(server.pid)
    schedulers = [p for p in report.processes if p.role == "scheduler"]
    assert len(schedulers) == 8
    assert all(
        p.env.get("NCCL_PROTO") == "LL" and p.env.get("NCCL_ALGO") == "Ring" for p in schedulers
    )
    main = next(p for p in report.processes if p.role == "main")
    assert "NCCL_PROTO" not in main.env  # set inside main by sitecustomize, after its exec
    assert report.reached_all("PYTHONPATH", "python")


def test_env_evidence_only_for_variables_that_were_read(seed_lab: Path, tmp_path: Path) -> None:
    """A variable outside the usual prefixes is "unknown" unless asked for, never "unset"."""
    from agent.relevance import env_arrival

    config = load_config(seed_lab)
    port = free_port()
    mirror = "https://alice:pw-9q8w7e@mirror.example.com/hub"  # masked in part, by its shape
    env = {
        **config.launch.env,
        "TRITON_CACHE_DIR": "/tmp/t",
        "LD_PRELOAD": "libx.so",
        "HF_ENDPOINT": mirror,
        "SGLANG_API_KEY": "plain-words-key",
    }
    names = frozenset({"TRITON_CACHE_DIR", "HF_HOME", "HF_ENDPOINT", "SGLANG_API_KEY"})
    with running_server(
        config.launch_argv(port), seed_lab, env, port, tmp_path / "s.log", timeout_s=60
    ) as server:
        usual = worker_env(server.pid)
        asked = worker_env(server.pid, names)
    # judged on the values as the workers had them, also once the record was saved masked and
    # the URL's password became a known secret (which changes how the whole value masks)
    learn_command(f"--mirror {mirror}")
    saved = WorkerEnv.model_validate_json(json.dumps(mask(asked.model_dump(mode="json"))))
    for record in (asked, saved):
        assert env_arrival("HF_ENDPOINT", mirror, record) == (8, 8, WHO)
        assert env_arrival("SGLANG_API_KEY", "plain-words-key", record) == (8, 8, WHO)
        assert env_arrival("SGLANG_API_KEY", "another-key", record) == (0, 8, WHO)
    assert "pw-9q8w7e" not in json.dumps(saved.model_dump(mode="json"))
    assert env_arrival("TRITON_CACHE_DIR", "/tmp/t", usual) is None
    assert env_arrival("LD_PRELOAD", "libx.so", asked) is None
    assert env_arrival("TRITON_CACHE_DIR", "/tmp/t", asked) == (8, 8, WHO)
    assert env_arrival("HF_HOME", "/h", asked) == (0, 8, WHO)  # read, and unset in every worker
    assert env_arrival("NCCL_PROTO", "LL", usual) == (8, 8, WHO)  # the lab's sitecustomize


def test_secret_looking_names_are_masked_and_told_apart() -> None:
    env = mask(
        {
            "SGLANG_API_KEY": "sk-123",
            "HF_TOKEN": "hf_x",
            "NCCL_PROTO": "LL",
            "OTHER_TOKEN": "sk-123",
            "tokenizer_path": "/models/x",
        }
    )
    assert env["NCCL_PROTO"] == "LL" and env["tokenizer_path"] == "/models/x"
    assert all(env[k].startswith(MASK) for k in ("SGLANG_API_KEY", "HF_TOKEN", "OTHER_TOKEN"))
    assert env["SGLANG_API_KEY"] == env["OTHER_TOKEN"] != env["HF_TOKEN"]


def test_openai_bench_against_the_lab(seed_lab: Path, tmp_path: Path) -> None:
    with _lab_server(seed_lab, tmp_path) as server:
        result = run_http_bench(
            server.base_url,
            "openai",
            requests=3,
            concurrency=2,
            input_len=16,
            output_len=24,
            warmup=1,
        )
    assert len(result.samples) == 3
    assert all(s.completion_tokens == 24 and s.time_source == "client" for s in result.samples)
    assert result.metrics["tok_s"].median > 0 and "ttft_ms" in result.metrics


def test_generate_bench_at_concurrency(seed_lab: Path, tmp_path: Path) -> None:
    with _lab_server(seed_lab, tmp_path) as server:
        result = run_http_bench(
            server.base_url,
            "generate",
            requests=6,
            concurrency=3,
            input_len=16,
            output_len=32,
            warmup=1,
        )
    assert len(result.samples) == 6 and result.metrics["verify_ms"].source == "server"
    assert all(s.meta_info["completion_tokens"] == 32 for s in result.samples)


URL = "http://127.0.0.1:1"


def _here(tmp_path: Path) -> LocalNode:
    return LocalNode(sys.executable, tmp_path, tmp_path)


def test_command_bench_regex_and_jsonl(tmp_path: Path) -> None:
    env = dict(os.environ)
    regex = BenchSection(
        kind="command",
        metric="itl_ms",
        unit="ms",
        command="echo 'ITL (ms): 12.5'; echo 'ITL (ms): 13.5'",
        metric_regex=r"ITL \(ms\):\s+([\d.]+)",
    )
    result = run_command_bench(regex, _here(tmp_path), tmp_path, env, URL, 1, tmp_path / "b.log")
    assert result.metrics["itl_ms"].samples == [12.5, 13.5]
    (tmp_path / "out.jsonl").write_text(
        '{"x": 1.5, "accept_len": 3, "verify_ms": 20.0, "ok": true}\n{"x": Infinity}\n'
        'not json\n[1]\n{"x": 2.5, "accept_len": 4, "verify_ms": 0, "note": "n"}\n'
        + "[" * 100_000  # nested past json's depth: a malformed line, not a RecursionError
        + "\n"
    )
    jsonl = BenchSection(
        kind="command", metric="x", command="true", metric_jsonl="out.jsonl", metric_key="x"
    )
    result = run_command_bench(jsonl, _here(tmp_path), tmp_path, env, URL, 1, tmp_path / "b.log")
    assert result.metrics["x"].samples == [1.5, 2.5]
    # the records' other numbers ride along; a zero time is no measurement, a flag no number
    extra = {name: (m.samples, m.unit) for name, m in result.metrics.items() if name != "x"}
    assert extra == {"accept_len": ([3.0, 4.0], "tokens"), "verify_ms": ([20.0], "ms")}
    failing = BenchSection(kind="command", command="echo boom; exit 4", metric_regex="(x)")
    with pytest.raises(BenchError, match="exited with 4: boom"):
        run_command_bench(failing, _here(tmp_path), tmp_path, env, URL, 1, tmp_path / "b.log")


@pytest.mark.parametrize(
    ("jsonl", "says"),
    [
        ("/dev/zero", "the bench's JSONL file /dev/zero is a device, not a regular file"),
        ("fifo", "fifo is a pipe, not a regular file"),  # no writer: open blocked for ever
        (".", "is a folder, not a regular file"),
        ("other.jsonl", "other.jsonl has no record with a number at 'x' (numeric keys in it: y)"),
    ],
)
def test_a_jsonl_file_that_holds_no_values_says_what_it_is(
    jsonl: str, says: str, tmp_path: Path
) -> None:
    """/dev/zero was read until memory ran out; a file without the key was "the bench
    command's output has no value", naming neither the file nor what it held."""
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "other.jsonl").write_text('{"y": 1}\n')
    bench = BenchSection(
        kind="command", metric="x", command="true", metric_jsonl=jsonl, metric_key="x"
    )
    with pytest.raises(BenchError, match=re.escape(says)):
        run_command_bench(bench, _here(tmp_path), tmp_path, {}, URL, 1, tmp_path / "b.log")


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        (r"x_ms \d+", "the whole match (it has no group) read 'x_ms 9'"),
        (r"x_(ms)", "group 1 read 'ms'"),
    ],
)
def test_a_metric_regex_that_matches_no_number_says_why(
    pattern: str, says: str, tmp_path: Path
) -> None:
    bench = BenchSection(
        kind="command", metric="x_ms", command="echo 'x_ms 9'", metric_regex=pattern
    )
    with pytest.raises(BenchError, match="not a number: put a group around the number") as no:
        run_command_bench(
            bench, _here(tmp_path), tmp_path, dict(os.environ), URL, 1, tmp_path / "b.log"
        )
    assert says in str(no.value)


def test_a_metric_regex_that_backtracks_is_stopped_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repeat inside a repeat ran for hours on one line of output (2 ** 40 ways to split
    forty digits), and the investigation with it."""
    monkeypatch.setattr(command, "REGEX_TIMEOUT_S", 0.5)
    bench = BenchSection(
        kind="command",
        metric="x_ms",
        command="echo x_ms " + "1" * 40,
        metric_regex=r"x_ms ((\d|\d)+)+y|x_ms (\d+)",
    )
    with pytest.raises(BenchError, match=r"took over 0.5 s on 46 characters") as slow:
        run_command_bench(
            bench, _here(tmp_path), tmp_path, dict(os.environ), URL, 1, tmp_path / "b.log"
        )
    assert "it backtracks" in str(slow.value) and "([0-9.]+)" in str(slow.value)


def test_command_bench_reads_a_bench_serving_block(tmp_path: Path) -> None:
    block = REPO_ROOT / "tests" / "fixtures" / "sglang_logs" / "24-bench-serving-old-variants.log"
    bench = BenchSection(kind="command", metric="output_throughput", command=f"cat {block}")
    result = run_command_bench(
        bench, _here(tmp_path), tmp_path, dict(os.environ), URL, 1, tmp_path / "b.log"
    )
    assert result.metrics["output_throughput"].samples[0] > 0
    missing = BenchSection(kind="command", metric="nope", command=f"cat {block}")
    with pytest.raises(BenchError, match="'nope'"):
        run_command_bench(
            missing, _here(tmp_path), tmp_path, dict(os.environ), URL, 1, tmp_path / "b.log"
        )


def test_command_bench_timeout_stops_everything_it_started(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    hang = BenchSection(
        kind="command",
        metric_regex="(x)",
        timeout_s=1.0,
        command=f"sleep 60 & echo $! > {pidfile}; echo started; sleep 60",
    )
    with pytest.raises(BenchError, match="timed out after 1 s"):
        run_command_bench(
            hang, _here(tmp_path), tmp_path, dict(os.environ), URL, 1, tmp_path / "b.log"
        )
    assert "started" in (tmp_path / "b.log").read_text()
    assert wait_gone([int(pidfile.read_text())]) == []


def test_chatty_output_is_kept_within_a_bound_and_read_whole(tmp_path: Path) -> None:
    """A bench that prints 6 MB (its value in the middle) and a server that prints 6 MB keep
    their head and tail in the log, the cut said; the value is still read."""
    chatty = "yes 'chatter chatter chatter chatter' | head -c 3000000"
    bench = BenchSection(
        kind="command",
        metric="x_ms",
        command=f"{chatty}; echo 'x_ms: 7.5'; {chatty}; echo done",
        metric_regex=r"x_ms: ([\d.]+)",
    )
    log = tmp_path / "bench.log"
    result = run_command_bench(bench, _here(tmp_path), tmp_path, dict(os.environ), URL, 1, log)
    assert result.metrics["x_ms"].samples == [7.5]
    text = log.read_text()
    assert len(text) < 2.5 * 2**20 and "bytes cut here" in text
    assert text.startswith("$ yes") and text.rstrip().endswith("done")

    script = tmp_path / "server.py"
    script.write_text(
        "import sys\nprint('first line')\nprint('z' * 6000000)\nprint('last line', flush=True)\n"
        + tiny_server("pass")
    )
    port = free_port()
    with running_server(
        [sys.executable, str(script), str(port)], tmp_path, {}, port, tmp_path / "s.log"
    ):
        pass
    text = (tmp_path / "s.log").read_text()
    assert len(text) < 2.5 * 2**20 and "bytes cut here" in text
    assert text.startswith("first line") and "last line" in text[-(2**20) :]


def test_a_number_with_a_comma_is_an_error_never_dropped(tmp_path: Path) -> None:
    """`1,001` read as nothing while `999` read: the launch's value came from its fast requests
    only. A comma in a number (thousands, or a decimal comma) is not guessed at."""
    bench = BenchSection(
        kind="command",
        metric="x_ms",
        command="echo 'x_ms 999'; echo 'x_ms 1,001'",
        metric_regex=r"x_ms (\S+)",
    )
    with pytest.raises(BenchError, match="read '1,001': a number written with a comma"):
        run_command_bench(
            bench, _here(tmp_path), tmp_path, dict(os.environ), URL, 1, tmp_path / "b.log"
        )


def test_a_request_without_a_number_is_an_error_never_dropped(tmp_path: Path) -> None:
    """`x_ms N/A` for a failed request beside numbers: leaving it out would give the launch the
    value of the requests that worked. A regex that matches only numbers leaves them out, as
    the user chose; an optional group that matched nothing is no value either way."""
    lines = "echo 'x_ms 10'; echo 'x_ms N/A'; echo 'x_ms 12'; echo 'x_ms N/A'"
    bench = BenchSection(kind="command", metric="x_ms", command=lines, metric_regex=r"x_ms (\S+)")
    log = tmp_path / "b.log"
    with pytest.raises(BenchError, match="read 'N/A' in 2 of 4 matches, not a number"):
        run_command_bench(bench, _here(tmp_path), tmp_path, dict(os.environ), URL, 1, log)
    for pattern in (r"x_ms ([0-9.]+)", r"x_ms ([0-9.]+)?"):
        chosen = bench.model_copy(update={"metric_regex": pattern})
        result = run_command_bench(chosen, _here(tmp_path), tmp_path, dict(os.environ), URL, 1, log)
        assert result.metrics["x_ms"].samples == [10.0, 12.0]


META_SERVER = tiny_server("""
import json
self.rfile.read(int(self.headers.get('Content-Length', 0)))
self.send_response(200); self.end_headers()
for line in json.loads(sys.argv[2]):
    self.wfile.write(b'data: ' + json.dumps(line).encode() + b'\\n\\n')
""")


@pytest.mark.parametrize(
    ("chunks", "said"),
    [
        ([{"meta_info": {"completion_tokens": 2, "spec_verify_ct": "abc"}}], "spec_verify_ct"),
        ([{"meta_info": {"completion_tokens": 2, "spec_verify_ct": True}}], "spec_verify_ct"),
        ([{"meta_info": {"completion_tokens": 2, "spec_verify_ct": -2}}], "spec_verify_ct"),
        (
            [
                {
                    "meta_info": {
                        "completion_tokens": 2,
                        "spec_verify_ct": 1,
                        "spec_accept_length": 1e308,
                    }
                }
            ],
            "spec_accept_length",
        ),
        ([{"meta_info": {"completion_tokens": 2.5}}], "completion_tokens"),
        ([{"meta_info": {"completion_tokens": 2, "prompt_tokens": "x"}}], "prompt_tokens"),
        ([[1, 2]], "no JSON object"),
        ([{"meta_info": [1]}], "meta_info = '\\[1\\]', not a JSON object"),
        ([{"choices": [{}], "usage": "x"}], "usage = 'x', not a JSON object"),
    ],
)
def test_a_server_reply_that_is_not_sglangs_is_one_line(
    tmp_path: Path, chunks: list, said: str
) -> None:
    """Counts that are no counts in meta_info: a TypeError ("float / str"), an OverflowError
    (1e308) or a negative verify time stopped the investigation; a JSON array on the stream
    an AttributeError."""
    script = tmp_path / "server.py"
    script.write_text(META_SERVER)
    port = free_port()
    argv = [sys.executable, str(script), str(port), json.dumps(chunks)]
    log, kind = tmp_path / "s.log", "openai" if "usage" in said else "generate"
    with (
        running_server(argv, tmp_path, dict(os.environ), port, log, "/"),
        pytest.raises(BenchError, match=said),
    ):
        run_http_bench(f"http://127.0.0.1:{port}", kind, 2, 1, 4, 4, warmup=0)


ODD_INFO_SERVER = """
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class H(BaseHTTPRequestHandler):
    def do_GET(self):  # a number for the architectures, a list for the model listing
        body = {"/model_info": b'{"architectures": 5}', "/v1/models": b"[1]"}.get(self.path, b"ok")
        self.send_response(200); self.send_header("Content-Length", str(len(body)))
        self.end_headers(); self.wfile.write(body)
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200); self.end_headers()
        for i in range(3):
            chunk = {"choices": [{"text": "x"}], "usage": {"completion_tokens": i + 1}}
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\\n\\n")
    def log_message(self, *args): pass

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def test_a_server_that_names_its_model_oddly_is_investigated(tmp_path: Path) -> None:
    """/model_info's architectures as a number stopped the investigation (a TypeError in
    gather); /v1/models as a list stopped the bench (an AttributeError)."""
    repo = make_repo(tmp_path, {"server.py": ODD_INFO_SERVER, "x.py": "X = 1\n"})
    (repo / "x.py").write_text("X = 2\n")
    (repo / "debug-agent.toml").write_text(
        "[launch]\ncommand = '{python} server.py {port}'\nready = '/'\ntimeout_s = 30\n"
        "[bench]\nkind = 'openai'\nrequests = 4\nwarmup = 0\n"
    )
    done = run_cli(
        "investigate", "--symptom", "latency 30ms", "--json", "--max-launches", "2", cwd=repo
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["status"] != "error" and result["launches"] == 2, result


ENDLESS_SERVER = """
import json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class H(BaseHTTPRequestHandler):
    def do_GET(self):  # the ready path and /model_info: a body without end
        self.send_response(200); self.end_headers()
        while True:
            self.wfile.write(b" " * 1000); self.wfile.flush(); time.sleep(0.01)
    def do_POST(self):  # a stream without end, a chunk every 50 ms
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200); self.end_headers()
        for i in range(1, 10**9):
            chunk = {"meta_info": {"completion_tokens": i}}
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\\n\\n"); self.wfile.flush()
            time.sleep(0.05)
    def log_message(self, *args): pass

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def test_a_server_that_answers_without_end_is_stopped_in_time(tmp_path: Path) -> None:
    """httpx's timeout is per read: a ready path or /model_info whose body never ends, and a
    stream that never ends, each hung the launch for ever."""
    repo = make_repo(tmp_path, {"server.py": ENDLESS_SERVER, "x.py": "X = 1\n"})
    (repo / "x.py").write_text("X = 2\n")
    (repo / "debug-agent.toml").write_text(
        "[launch]\ncommand = '{python} server.py {port}'\nready = '/'\ntimeout_s = 30\n"
        "[bench]\nkind = 'generate'\nrequests = 2\nwarmup = 0\ntimeout_s = 3\n"
    )
    done = run_cli("experiment", cwd=repo, timeout=90)
    assert_one_line_error(
        done, "the bench ran past bench.timeout_s (3 s): 0 of 2 requests answered"
    )


@pytest.mark.parametrize(
    ("status", "said"),
    [(200, "streamed a line of over 16,777,216 characters"), (500, "returned HTTP 500: 'data: ")],
)
def test_a_reply_without_end_is_read_within_a_bound(tmp_path: Path, status: int, said: str) -> None:
    """A line without end was kept whole by httpx's line reader until the bench's deadline
    (gigabytes); an error reply without end was read whole before its first 200 characters
    were shown."""
    script = tmp_path / "server.py"
    script.write_text(
        tiny_server(
            "self.rfile.read(int(self.headers.get('Content-Length', 0)))\n"
            f"self.send_response({status}); self.end_headers()\n"
            "self.wfile.write(b'data: ')\n"
            "while True:\n"
            "    self.wfile.write(b'x' * 1_000_000)\n"
        )
    )
    port = free_port()
    argv = [sys.executable, str(script), str(port)]
    log = tmp_path / "s.log"
    with (
        running_server(argv, tmp_path, dict(os.environ), port, log, "/"),
        pytest.raises(BenchError, match=said),
    ):
        run_http_bench(f"http://127.0.0.1:{port}", "generate", 1, 1, 4, 4, warmup=0, timeout_s=120)


def test_the_profilers_routes_are_answered_by_their_status(tmp_path: Path) -> None:
    """/start_profile's reply was read whole: a body without end hung the launch."""
    from tools.profile.torch_profiler import start_torch_profile, stop_torch_profile

    script = tmp_path / "server.py"
    script.write_text(
        tiny_server(
            "self.rfile.read(int(self.headers.get('Content-Length', 0)))\n"
            "self.send_response(200); self.end_headers()\n"
            "while True:\n"
            "    self.wfile.write(b' ' * 100_000)\n"
        )
    )
    port = free_port()
    argv = [sys.executable, str(script), str(port)]
    with running_server(argv, tmp_path, dict(os.environ), port, tmp_path / "s.log", "/"):
        url = f"http://127.0.0.1:{port}"
        assert start_torch_profile(url, str(tmp_path / "traces"), 8) is None
        assert stop_torch_profile(url) is None


def test_a_bench_stopped_by_sigterm_ends_though_its_request_waits_on(tmp_path: Path) -> None:
    """SIGTERM unwinds the bench, but its request's thread still waits for the reply (a server
    that never answers, reached where closing the client does not wake the read: a node's
    relay). ThreadPoolExecutor's workers are joined as the interpreter exits: the agent lived
    on until httpx's read timeout (bench.timeout_s, 600 s by default), its cleanup done."""
    script = tmp_path / "server.py"
    script.write_text(tiny_server("time.sleep(3600)"))
    port = free_port()
    argv = [sys.executable, str(script), str(port)]
    bench = (
        "import signal, sys\n"
        "from tools.bench.serving import run_http_bench\n"
        "signal.signal(signal.SIGTERM, lambda n, f: sys.exit(143))  # as the CLI does\n"
        "print('benching', flush=True)\n"
        f"run_http_bench('http://127.0.0.1:{port}', 'generate', 1, 1, 4, 4, 0, 300.0)\n"
    )
    with running_server(argv, tmp_path, dict(os.environ), port, tmp_path / "s.log", "/"):
        proc = subprocess.Popen(
            [sys.executable, "-c", bench], stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT
        )
        try:
            assert proc.stdout is not None and proc.stdout.readline() == "benching\n"
            time.sleep(1.0)  # the request is on its way, its thread in the read
            proc.terminate()
            assert proc.wait(timeout=30) == 143
        finally:
            proc.kill()
