"""diff and experiment on bad input: one clear line, a non-zero exit, no traceback."""

from __future__ import annotations

import re
import socket
import textwrap
from pathlib import Path

import pytest

from tests.conftest import assert_one_line_error, make_repo, run_cli

# a stand-in server: /health answers, /generate fails (the HTTP error case)
FAILING_SERVER = textwrap.dedent("""\
    import sys
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class H(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
        def do_POST(self):
            body = b"internal error"
            self.send_response(500); self.send_header("Content-Length", str(len(body)))
            self.end_headers(); self.wfile.write(body)
        def log_message(self, *a): pass

    HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
""")


def _target(
    tmp_path: Path, command: str, good: str = "good", timeout_s: float = 30, change: bool = True
) -> Path:
    repo = make_repo(tmp_path, {"srv.py": FAILING_SERVER, "a.py": "x = 1\n"})
    if change:
        (repo / "a.py").write_text("x = 2\n")
    (repo / "debug-agent.toml").write_text(
        textwrap.dedent(f"""\
        [target]
        good = "{good}"
        [launch]
        command = '''{command}'''
        timeout_s = {timeout_s}
        [bench]
        requests = 2
        output_len = 4
    """)
    )
    return repo


def test_not_a_git_repository(tmp_path: Path) -> None:
    (tmp_path / "debug-agent.toml").write_text('[launch]\ncommand = "x {port}"\n')
    assert_one_line_error(run_cli("diff", cwd=tmp_path), "is not a git repository")


def test_unknown_ref(tmp_path: Path) -> None:
    repo = _target(tmp_path, "{python} srv.py {port}", good="no-such-ref")
    assert_one_line_error(run_cli("diff", cwd=repo), "unknown git ref 'no-such-ref'")


def test_no_difference(tmp_path: Path) -> None:
    repo = _target(tmp_path, "{python} srv.py {port}", change=False)
    assert_one_line_error(run_cli("diff", cwd=repo), "no difference")
    assert_one_line_error(run_cli("experiment", cwd=repo), "no difference")


def test_unknown_candidate_id(seed_lab: Path) -> None:
    assert_one_line_error(
        run_cli("experiment", "--revert", "nope", cwd=seed_lab), "unknown candidate id 'nope'"
    )


def test_revert_and_apply_together(seed_lab: Path) -> None:
    assert_one_line_error(
        run_cli("experiment", "--revert", "engine", "--apply", "parallel_state", cwd=seed_lab),
        "not both",
    )


def test_bad_env_pair(seed_lab: Path) -> None:
    assert_one_line_error(run_cli("experiment", "--env", "NCCL_PROTO", cwd=seed_lab), "NAME=VALUE")


def test_server_exits_during_start_up(tmp_path: Path) -> None:
    command = (
        "{python} -c \"import sys; print('torch.OutOfMemoryError: CUDA out of memory'); "
        'sys.exit(3)" {port}'
    )
    repo = _target(tmp_path, command)
    assert_one_line_error(
        run_cli("experiment", cwd=repo),
        "server exited with code 3 during start-up",
        "CUDA out of memory",
    )


def test_server_never_ready(tmp_path: Path) -> None:
    repo = _target(tmp_path, '{python} -c "import time; time.sleep(60)" {port}', timeout_s=1)
    assert_one_line_error(
        run_cli("experiment", cwd=repo),
        "server not ready after 1 s (waited for /health; it listens on no TCP port yet",
    )


SILENT = (  # accepts connections, never answers
    "import socket, sys; s = socket.create_server(('127.0.0.1', int(sys.argv[1]))); "
    "held = [s.accept() for _ in iter(int, 1)]"
)


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("-m http.server --bind ::1 {port}", r"listens on \[::1\]:(\d+), not on 127\.0\.0\.1:\1;"),
        ("-m http.server --bind 127.0.0.1 {free} --directory {port}", r"127\.0\.0\.1:\d+, not on"),
        (f'-c "{SILENT}" {{port}}', r"listens on 127\.0\.0\.1:\d+ but gave no HTTP answer;"),
    ],
)
def test_a_server_not_ready_says_where_it_listens(command: str, says: str, tmp_path: Path) -> None:
    """It said only "not ready": a server on ::1 alone, on a port of its own (the command never
    passed {port} on), or one that never answered, waited out its start-up time unexplained."""
    from tools.proc.server import free_port

    command = "{python} " + command.replace("{free}", str(free_port()))
    repo = _target(tmp_path, command, timeout_s=2)
    done = run_cli("experiment", cwd=repo)
    assert_one_line_error(done, "server not ready after 2 s")
    assert re.search(says, done.stderr), done.stderr


def test_a_ready_path_the_server_does_not_have_says_what_it_answered(tmp_path: Path) -> None:
    """A misspelt `ready` path: the server answers 404 until the start-up time runs out."""
    repo = _target(tmp_path, "{python} -m http.server --bind 127.0.0.1 {port}", timeout_s=2)
    config = repo / "debug-agent.toml"
    config.write_text(config.read_text().replace("[bench]", 'ready = "/helth"\n[bench]'))
    assert_one_line_error(
        run_cli("experiment", cwd=repo), "not ready after 2 s (waited for /helth; it answered 404"
    )


def test_port_in_use(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        repo = _target(tmp_path, f"{{python}} srv.py {port} --port {port}")
        assert_one_line_error(run_cli("experiment", cwd=repo), f"port {port} is already in use")


def test_http_error_from_the_benchmark(tmp_path: Path) -> None:
    repo = _target(tmp_path, "{python} srv.py {port}")
    assert_one_line_error(run_cli("experiment", cwd=repo), "returned HTTP 500")
