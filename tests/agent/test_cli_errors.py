"""Bad input: one clear line on stderr, a non-zero exit, never a traceback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import assert_one_line_error, make_repo, run_cli


def test_create_into_non_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("mine")
    assert_one_line_error(run_cli("lab", "create", "seed", str(tmp_path)), "not an empty folder")
    assert (tmp_path / "x.txt").read_text() == "mine"


def test_create_where_no_folder_can_be(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("mine")
    assert_one_line_error(
        run_cli("lab", "create", "seed", str(tmp_path / "a-file" / "lab")),
        "cannot create the lab folder",
    )
    assert (tmp_path / "a-file").read_text() == "mine"


@pytest.mark.parametrize("command", ["replay", "report"])
def test_a_session_path_that_holds_no_session(command: str, tmp_path: Path) -> None:
    for name in (str(tmp_path / "nowhere"), "some/where"):  # an absolute path, a relative one
        assert_one_line_error(run_cli(command, name, cwd=tmp_path), "is not a session folder")


@pytest.mark.parametrize(
    ("state", "says"),
    [
        ("{", "Invalid JSON"),
        ('{"session_id": 3}', "session_id: Input should be a valid string"),
    ],
)
def test_a_damaged_final_state_is_one_line(state: str, says: str, tmp_path: Path) -> None:
    """`report --html` and `replay --rerun` read state.json: damaged, it is named, never an
    internal error."""
    session = tmp_path / "20261207-000000-abcdef"
    session.mkdir()
    (session / "transcript.jsonl").write_text('{"kind": "header", "session": "x"}\n')
    (session / "state.json").write_text(state)
    for args in (["report", str(session), "--html"], ["replay", str(session), "--rerun"]):
        assert_one_line_error(
            run_cli(*args, cwd=tmp_path), f"cannot be read as a session's state: {says}"
        )


def test_a_damaged_result_is_listed_as_such(tmp_path: Path) -> None:
    """One session's broken result.json does not take the whole list down."""
    session = tmp_path / "20261207-000000-abcdef"
    session.mkdir()
    (session / "transcript.jsonl").write_text(
        '{"kind": "header", "schema": "debug-agent.transcript/1", "session": "x"}\n'
    )
    (session / "result.json").write_text('{"bad\n')
    done = run_cli("sessions", "--dir", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "20261207-000000-abcdef" in done.stdout and "result.json damaged" in done.stdout


def test_a_folder_in_place_of_a_transcript_is_one_line(tmp_path: Path) -> None:
    """The session cannot be read; the list of the others is still shown."""
    good = tmp_path / "20261207-000000-abcdef"
    good.mkdir()
    (good / "transcript.jsonl").write_text(
        '{"kind": "header", "schema": "debug-agent.transcript/1", "session": "x"}\n'
    )
    folder = tmp_path / "20261207-000001-fedcba"
    (folder / "transcript.jsonl").mkdir(parents=True)
    done = run_cli("sessions", "--dir", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "20261207-000000-abcdef" in done.stdout
    assert_one_line_error(run_cli("replay", str(folder), "--plain"), "Is a directory")
    (folder / "state.json").mkdir()
    assert_one_line_error(run_cli("report", str(folder), "--html"), "Is a directory")


def test_create_unknown_kind(tmp_path: Path) -> None:
    assert_one_line_error(
        run_cli("lab", "create", "nope", str(tmp_path / "l")), "unknown lab kind 'nope'"
    )


def test_create_random_needs_a_seed(tmp_path: Path) -> None:
    assert_one_line_error(run_cli("lab", "create", "random", str(tmp_path / "l")), "--seed")


def test_create_random_noise_out_of_range(tmp_path: Path) -> None:
    assert_one_line_error(
        run_cli("lab", "create", "random", str(tmp_path / "l"), "--seed", "1", "--noise", "3"),
        "--noise",
    )


def test_truth_of_a_folder_that_is_no_lab(tmp_path: Path) -> None:
    assert_one_line_error(run_cli("lab", "truth", str(tmp_path)), "no lab truth")


def test_serve_without_config(tmp_path: Path) -> None:
    assert_one_line_error(run_cli("lab", "serve", str(tmp_path), "--port", "1"), "debug-agent.toml")


def test_serve_with_broken_config(tmp_path: Path) -> None:
    (tmp_path / "debug-agent.toml").write_text("[launch]\ncommand = 3\n")
    assert_one_line_error(run_cli("lab", "serve", str(tmp_path)), "launch.command")
    (tmp_path / "debug-agent.toml").write_text("[launch\n")
    assert_one_line_error(run_cli("lab", "serve", str(tmp_path)), "not valid TOML")
    (tmp_path / "debug-agent.toml").write_text('[launch]\ncommand = "x"\nbogus = 1\n')
    assert_one_line_error(run_cli("lab", "serve", str(tmp_path)), "launch.bogus")


def test_serve_on_a_port_in_use(seed_lab: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert_one_line_error(
            run_cli("lab", "serve", str(seed_lab), "--port", str(port)),
            f"port {port} is already in use",
        )


@pytest.mark.parametrize("symptom", ["it is slow", "verify", ""])
def test_unreadable_symptom(symptom: str, tmp_path: Path) -> None:
    assert_one_line_error(
        run_cli("investigate", "--symptom", symptom, cwd=tmp_path), "accepted forms"
    )


def test_logs_parse_missing_file(tmp_path: Path) -> None:
    assert_one_line_error(run_cli("logs", "parse", str(tmp_path / "none.log")), "no such log file")


def test_a_log_or_a_config_that_is_no_regular_file_is_not_read_forever(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "server.log")  # nothing ever writes it: a read would wait forever
    assert_one_line_error(
        run_cli("logs", "parse", str(tmp_path / "server.log")), "is not a regular file"
    )
    (tmp_path / "debug-agent.toml").symlink_to("/dev/zero")  # endless zeros
    assert_one_line_error(
        run_cli("investigate", "--symptom", "verify 29ms", cwd=tmp_path), "not a regular file"
    )


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--max-minutes", "0"),
        ("--max-minutes", "-5"),
        ("--max-minutes", "nan"),
        ("--max-minutes", "inf"),
        ("--max-llm-cost", "-1"),
    ],
)
def test_a_budget_is_a_number_above_zero(option: str, value: str, tmp_path: Path) -> None:
    done = run_cli("investigate", "--symptom", "verify 29ms", option, value, cwd=tmp_path)
    assert_one_line_error(done, f"{option} {value} is not a budget")


def test_logs_parse_garbage_and_empty(tmp_path: Path) -> None:
    import json

    (tmp_path / "bin.log").write_bytes(bytes(range(256)) * 50)
    (tmp_path / "empty.log").write_bytes(b"")
    for name in ("bin.log", "empty.log"):
        done = run_cli("logs", "parse", str(tmp_path / name), "--json")
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        assert set(out) == {"server", "server_args", "decode", "prefill", "bench", "errors"}


def test_json_nested_past_the_parsers_depth_is_a_damaged_line(tmp_path: Path) -> None:
    """A line of 100,000 `[` made json raise RecursionError, which `replay` let through as an
    internal error; every reader of outside JSON now takes it as malformed."""
    session = tmp_path / "20261207-000000-abcdef"
    session.mkdir()
    (session / "transcript.jsonl").write_text(
        '{"kind": "header", "schema": "debug-agent.transcript/1", "session": "x"}\n'
        + "[" * 100_000
        + "\n{}\n"
    )
    for args in (["replay", str(session), "--plain"], ["replay", str(session)]):
        assert_one_line_error(run_cli(*args, cwd=tmp_path), "transcript.jsonl:2 is not a JSON line")


def test_a_sessions_folder_that_is_none_is_one_line(tmp_path: Path) -> None:
    """`sessions --dir` with a typo listed nothing and exited 0, as if there were no sessions."""
    (tmp_path / "file").write_text("x\n")
    for folder, says in (
        (tmp_path / "nope", "does not exist"),
        (tmp_path / "file", "is not a folder"),
    ):
        for args in (["sessions"], ["sessions", "prune"]):
            assert_one_line_error(run_cli(*args, "--dir", str(folder), cwd=tmp_path), says)


def test_a_config_is_read_as_written_never_coerced(tmp_path: Path) -> None:
    """A byte-order mark (Notepad's) is read past; UTF-16 is one line; `requests = true` was
    read as 1 and `timeout_s = "60"` as 60: a value of the wrong type is one line."""
    from tests.tools.test_generic_target import BENCH, CONFIG, SERVER

    repo = make_repo(tmp_path, {"server.py": SERVER, "bench.py": BENCH})
    config = repo / "debug-agent.toml"
    config.write_bytes(b"\xef\xbb\xbf" + CONFIG.encode())
    assert run_cli("check", cwd=repo).returncode == 0
    config.write_text(CONFIG, encoding="utf-16")
    assert_one_line_error(run_cli("check", cwd=repo), "not UTF-8 text")
    for bench_line in ("requests = true", 'requests = "8"'):
        config.write_text(f"{CONFIG}{bench_line}\n")  # [bench] is the last table
        assert_one_line_error(run_cli("check", cwd=repo), "bench.requests")
    for timeout in ('timeout_s = "60"', "timeout_s = 1979-05-27"):
        config.write_text(CONFIG.replace("timeout_s = 30", timeout))
        assert_one_line_error(run_cli("check", cwd=repo), "launch.timeout_s")


@pytest.mark.parametrize("arg", ["--port 5", "--port=5", "--tp 8 --port 7"])
def test_an_arg_that_moves_the_launchs_port_is_refused(arg: str, seed_lab: Path) -> None:
    """The server listened on port 5 while the launch waited on its own port: 60 s, then
    "not ready"."""
    done = run_cli("experiment", "--arg", arg, cwd=seed_lab)
    assert_one_line_error(done, f"--arg {arg!r} sets --port, which debug-agent fills")


@pytest.mark.parametrize(
    ("command", "flag"),
    [
        ("srv --port {port}", "--port"),
        ("srv -p {port} --x", "-p"),
        ("srv --listen={port}", "--listen"),
        ("srv --bind 0.0.0.0:{port}", None),
        ("srv --port 8000", None),
    ],
)
def test_the_option_that_carries_the_port(command: str, flag: str | None) -> None:
    from tools.measure import port_flag

    assert port_flag(command) == flag


@pytest.mark.parametrize("columns", ["0", "3", "wide"])
def test_a_width_no_table_fits_in_still_shows_the_table(columns: str, seed_lab: Path) -> None:
    """COLUMNS=0 (set by some CI runners) printed nothing at all, exit status 0."""
    done = run_cli("diff", cwd=seed_lab, env={"COLUMNS": columns})
    assert done.returncode == 0, done.stderr
    assert "parallel_state-" in done.stdout and "sitecustomize-" in done.stdout


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("ALL_PROXY", "socks5://127.0.0.1:9", "httpx[socks]"),
        ("SSL_CERT_FILE", "/no/such/bundle.pem", "SSL_CERT_FILE or SSL_CERT_DIR name cannot"),
    ],
)
def test_an_environment_the_model_client_cannot_use_is_one_line(
    variable: str, value: str, says: str, seed_lab: Path
) -> None:
    """A SOCKS proxy without httpx's SOCKS support stopped the investigation at its first
    model call; a missing SSL_CERT_FILE was an internal error before any launch."""
    llm = ["--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m"]
    done = run_cli("investigate", *llm, cwd=seed_lab, env={variable: value})
    assert_one_line_error(done, "the model endpoint (--llm-base-url) cannot be reached", says)


@pytest.mark.parametrize("command", ["experiment", "profile"])
def test_a_metric_the_bench_never_measures_is_refused_before_a_launch(
    command: str, seed_lab: Path
) -> None:
    """It was an error after a whole launch."""
    done = run_cli(command, "--metric", "foo_ms", cwd=seed_lab)
    assert_one_line_error(done, "--metric 'foo_ms': the bench measures latency_ms | tok_s")


@pytest.mark.parametrize(
    ("closed", "args", "says"),
    [
        (">&-", "sessions", ""),  # stdout closed: nothing to say, nothing broken
        ("<&-", "chat", "left session"),  # stdin closed: read as the end of the input
    ],
)
def test_a_closed_standard_stream_is_no_internal_error(
    closed: str, args: str, says: str, seed_lab: Path
) -> None:
    """Python leaves a closed stream None: its first isatty() was an internal error."""
    done = subprocess.run(
        ["bash", "-c", f'exec "$0" -m agent {args} {closed}', sys.executable],
        cwd=seed_lab,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "XDG_STATE_HOME": str(seed_lab / "state")},
    )
    assert done.returncode == 0, done.stderr
    assert "error" not in done.stderr and says in done.stdout


def test_a_package_set_in_a_pipe_is_one_line(seed_lab: Path) -> None:
    """`--good-env <(pip freeze)` resolved to /proc/PID/fd/pipe:[N], "no such file"; a resumed
    session reads the set again, so a pipe is refused by what it is."""
    done = subprocess.run(
        ["bash", "-c", '"$0" -m agent investigate --good-env <(echo a==1)', sys.executable],
        cwd=seed_lab,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "XDG_STATE_HOME": str(seed_lab / "state")},
    )
    assert_one_line_error(done, "/dev/fd/", "is a pipe, not a regular", "pip freeze > good.txt")


@pytest.mark.parametrize("pid", ["-5", "0"])
def test_env_of_a_pid_that_cannot_be_is_a_usage_error(pid: str) -> None:
    """`env -- -5` was an internal error (psutil's ValueError)."""
    done = run_cli("env", "--", pid)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "Input should be greater than or equal to 1" in done.stderr, done.stderr


def test_toml_nested_past_the_parsers_depth_is_one_line(seed_lab: Path, tmp_path: Path) -> None:
    """tomllib raises RecursionError there: `check` was an internal error."""
    deep = "x = " + "[" * 10_000 + "]" * 10_000 + "\n"
    config = tmp_path / "deep.toml"
    config.write_text((seed_lab / "debug-agent.toml").read_text() + deep)
    done = run_cli("check", "--config", str(config), cwd=seed_lab)
    assert_one_line_error(done, "not valid TOML: nested too deeply to read")
    lock = tmp_path / "uv.lock"
    lock.write_text("version = 1\n" + deep)
    done = run_cli("investigate", "--symptom", "verify 29ms", "--good-env", str(lock), cwd=seed_lab)
    assert_one_line_error(done, "is not valid TOML: nested too deeply to read")
