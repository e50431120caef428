"""Hostile and messy input to every command: a clear error line or a normal answer, never a
traceback or an "internal error". Each case runs the real command line (`agent.cli.main`) in
this process, which keeps a hundred of them fast; the ones that need a real launch are below.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.conftest import (
    assert_one_line_error,
    bench_repo,
    investigate_seed,
    make_repo,
    run_cli,
    tiny_server,
)
from tools.lab.create import create_lab

SYMPTOMS = [
    "",
    " ",
    "verify",
    "verify -5ms",
    "verify 0ms",
    "verify 1e400ms",
    "verify 1e-400ms",
    "verify 29ms (was 45)",
    "82 tok/s (was 60)",
    "verify NaNms",
    "verify infms",
    "\x00\x01",
    "verify 29ms" * 500,
    "tok/s",
    "verify 29 ms (was abc)",
    "ｖｅｒｉｆｙ ２９ms",
    "verify 29ms (was 19) (was 18)",
    "verify 29ms (was -19)",
    "TTFT 9e99s",
    "latency 12",
    "verify 29ms\n(was 19)",
    "💥 29ms",
]

CONFIGS = [
    "[launch\n",
    "not toml at all = = =",
    "",
    "[target]\nrepo = '.'\n",
    "[launch]\ncommand = 3\n",
    "[launch]\ncommand = ''\n",
    '[launch]\ncommand = "x \'{port}"\n',
    "[launch]\ncommand = 'x {port}'\nready = 'health'\n",
    "[launch]\ncommand = 'x {port}'\nready = 'log:(['\n",
    "[launch]\ncommand = 'x {port}'\ntimeout_s = -1\n",
    "[launch]\ncommand = 'x {port}'\ntimeout_s = 0\n",
    "[launch]\ncommand = 'x {port}'\ntimeout_s = 'soon'\n",
    "[launch]\ncommand = 'nosuchexecutable-xyz {port}'\n",
    "[launch]\ncommand = 'true'\n",
    "[launch]\ncommand = 'true {port}'\nenv = 'x'\n",
    "[launch]\ncommand = 'true {port}'\nenv = { A = 1 }\n",
    "[launch]\ncommand = 'true {port}'\n[bench]\nrequests = 0\n",
    "[launch]\ncommand = 'true {port}'\n[bench]\nkind = 'nope'\n",
    "[launch]\ncommand = 'true {port}'\n[bench]\nkind = 'command'\n",
    "[launch]\ncommand = 'true {port}'\n[bench]\nkind = 'command'\ncommand = 'true'\n"
    "metric_regex = '(['\n",
    "[launch]\ncommand = 'true {port}'\n[bench]\ntimeout_s = -3\n",
    "[launch]\ncommand = 'true {port}'\n[foo]\nx = 1\n",
    "[launch]\ncommand = 'true {port}'\nbogus = 1\n",
    "[launch]\ncommand = 'true {port}'\n[target]\nrepo = '/nonexistent/repo'\n",
    "[launch]\ncommand = 'true {port}'\n[target]\ngood = 'no-such-ref'\n",
    "[launch]\ncommand = 'true {port}'\n[target]\nrepo = 'a.py'\n",
    "[launch]\ncommand = 'true {port}'\n[budget]\nmax_launches = 1\n",
    "[launch]\ncommand = 'true {port}'\n[baseline]\ncommand = \"x '\"\n",
    "[launch]\ncommand = 'true {port}'\n[host]\nssh = ''\n",
    "\xff\xfe garbage \x00",
    # what no environment carries: a NUL byte, an empty name, a name holding "="
    "[launch]\ncommand = 'true {port}'\nenv = { A = \"x\\u0000y\" }\n",
    "[launch]\ncommand = 'true {port}'\nenv = { 'A=B' = '1' }\n",
    # nor any command line, ref or path: `check` said ok, the launch was an internal error
    '[launch]\ncommand = "true {port} \\u0000"\n',
    "[launch]\ncommand = 'true {port}'\n[target]\ngood = \"HEAD\\u0000\"\n",
    "[launch]\ncommand = 'true {port}'\n[build]\ncommand = 'true'\nenv = { '' = '1' }\n",
    # TOML spells inf and nan
    "[launch]\ncommand = 'true {port}'\ntimeout_s = inf\n",
    "[launch]\ncommand = 'true {port}'\n[budget]\nmax_minutes = nan\n",
    "[launch]\ncommand = 'true {port}'\nready = 'log:'\n",
    # digits str.isdigit takes and int() does not
    "[launch]\ncommand = 'true --port ²'\n",
    "[launch]\ncommand = 'true --port=70000'\n",
    "[launch]\ncommand = 'true {port}'\n[host]\nssh = 'u@h:²'\n",
    "[launch]\ncommand = 'true {port}'\n[cluster]\nray = 'h:²'\n",
    # a first word longer than any file name
    "[launch]\ncommand = '" + "x" * 5000 + " {port}'\n",
    # past any clock's range, past the checkpoint's integers, a price below 0, no symptom
    "[launch]\ncommand = 'true {port}'\n[bench]\ntimeout_s = 1e300\n",
    "[launch]\ncommand = 'true {port}'\ntimeout_s = 1e300\n",
    "[launch]\ncommand = 'true {port}'\n[bench]\nrequests = 99999999999999999999\n",
    "[launch]\ncommand = 'true {port}'\n[budget]\nmax_launches = 99999999999999999999\n",
    "[launch]\ncommand = 'true {port}'\n[llm]\nmax_cost = -1\n",
    "[launch]\ncommand = 'true {port}'\n[symptom]\ndefault = 'garbage'\n",
    "[launch]\ncommand = 'true {port}'\n[llm]\nmodel = 'm'\nbase_url = 'localhost:8000/v1'\n",
    # a misspelt placeholder went to the server as written (which then waited its timeout)
    "[launch]\ncommand = 'true --port {prot}'\n",
    # a metric with no name; a JSONL file without its key, or beside a regex (one was ignored)
    "[bench]\nkind = 'command'\ncommand = 'true'\nmetric = ' '\nmetric_regex = '(x)'\n",
    "[bench]\nkind = 'command'\ncommand = 'true'\nmetric_jsonl = 'o.jsonl'\n",
    "[bench]\nkind = 'command'\ncommand = 'true'\nmetric_regex = '(x)'\nmetric_jsonl = 'o'\n"
    "metric_key = 'k'\n",
]

ARGV_CASES = [
    ["replay", "../etc"],
    ["replay", ""],
    ["replay", "*"],
    ["replay", "a/../b"],
    ["replay", "no-such-session"],
    ["report", "../../etc/passwd"],
    ["report", "x", "--html"],
    ["investigate", "--resume", "../x"],
    ["investigate", "--resume", "nope"],
    ["investigate"],
    ["investigate", "--symptom", "verify 29ms", "--max-launches", "1"],
    ["investigate", "--symptom", "verify 29ms", "--max-launches", "abc"],
    ["chat", "--resume", "../../x"],
    ["sessions", "--dir", "/nonexistent/folder"],
    ["logs", "parse", "/nonexistent.log"],
    ["logs", "parse", "/"],
    ["logs", "parse", ""],
    ["env", "0"],
    ["env", "-1"],
    ["env", "abc"],
    ["env", "999999999"],
    ["lab", "create", "nope", "/tmp/x-never"],
    ["lab", "truth", "/nonexistent"],
    ["lab", "serve", "/nonexistent"],
    ["lab", "bench", "--scenarios", "-1"],
    ["lab", "bench", "--scenarios", "1", "--noise", "9"],
    ["paths", "--repo", "/nonexistent", "x.py"],
    ["paths", "--log", "/nonexistent", "x.py"],
    ["diff", "--config", "/nonexistent.toml"],
    ["check", "--config", "/"],
    ["experiment", "--config", "/nonexistent.toml"],
    # names longer than the system looks up
    ["replay", "x" * 5000],
    ["report", "x" * 5000, "--html"],
    ["investigate", "--resume", "x" * 5000],
    ["investigate", "--symptom", "verify 29ms", "--llm-replay", "x" * 5000],
    ["sessions", "--dir", "/tmp/" + "y" * 300],
    ["logs", "parse", "/tmp/" + "y" * 300],
    ["paths", "--repo", "/tmp/" + "y" * 300, "x.py"],
    ["check", "--config", "/tmp/" + "y" * 300],
    ["lab", "create", "seed", "/tmp/" + "y" * 300],
    ["nosuchcommand"],
    ["--bogus-flag"],
    # past any clock's range, past the checkpoint's integers
    ["investigate", "--symptom", "verify 29ms", "--max-minutes", "1e300"],
    ["investigate", "--symptom", "verify 29ms", "--max-launches", "99999999999999999999999"],
    ["investigate", "--symptom", "verify 29ms", "--max-llm-calls", "99999999999999999999"],
    ["lab", "bench", "--scenarios", "99999999999999999999"],
    # model endpoints no client can reach (one was an internal error after two launches)
    ["investigate", "--symptom", "verify 29ms", "--llm-model", "m", "--llm-base-url", "[::1"],
    [
        "investigate",
        "--symptom",
        "verify 29ms",
        "--llm-model",
        "m",
        "--llm-base-url",
        "http://[::1",
    ],
    ["chat", "--symptom", "verify 29ms", "--llm-model", "m", "--llm-base-url", "http://h:99999"],
]

EXPERIMENT_ARGS = [
    ["--arg", "--foo 'bar"],
    ["--env", "=x"],
    ["--env", "NOEQUALS"],
    ["--revert", "nope"],
    ["--apply", "nope"],
    ["--env", "A=1", "--arg", '"'],
    ["--revert", "a", "--apply", "b"],
    ["--samples", "0"],
    ["--launches", "0"],
    ["--metric", "nope", "--samples", "1"],
    ["--out", "/proc/x"],  # a folder no one can make
    ["--out", "/dev/null/x"],
    ["--launches", "99999999999999999999"],
]


def _main(
    argv: list[str], cwd: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    from agent.cli.main import main

    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", ["debug-agent", *argv])
    monkeypatch.setattr(sys, "stdin", open(os.devnull))  # noqa: SIM115 (no terminal to ask)
    code = 0
    try:
        main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    out = capsys.readouterr()
    return code, out.out + out.err


def _calm(code: int, output: str) -> None:
    assert "Traceback" not in output and "internal error" not in output, output[-2000:]
    if code not in (0, 2):  # 2: the argument parser's own usage error
        errors = [line for line in output.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1, output[-2000:]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = make_repo(tmp_path_factory.mktemp("hostile"))
    (repo / "a.py").write_text("changed\n")
    return repo


@pytest.mark.parametrize("symptom", SYMPTOMS)
def test_symptoms(
    symptom: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "debug-agent.toml").write_text("[launch]\ncommand = '\n")  # never launches
    code, output = _main(["investigate", "--symptom", symptom], tmp_path, capsys, monkeypatch)
    _calm(code, output)
    assert code != 0


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("command", ["check", "diff", "investigate"])
def test_configs(
    config: str,
    command: str,
    repo: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (repo / "debug-agent.toml").write_bytes(config.encode("utf-8", "surrogateescape"))
    argv = [command] + (["--symptom", "verify 29ms"] if command == "investigate" else [])
    code, output = _main(argv, repo, capsys, monkeypatch)
    _calm(code, output)
    if command != "diff":  # diff needs no launch: a config fine for it may fail to launch
        assert code != 0, output


@pytest.mark.parametrize("argv", ARGV_CASES, ids=lambda a: " ".join(a)[:40])
def test_commands(
    argv: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _calm(*_main(argv, tmp_path, capsys, monkeypatch))


@pytest.mark.parametrize("args", EXPERIMENT_ARGS, ids=lambda a: " ".join(a)[:40])
def test_experiment_arguments(
    args: list[str],
    seed_lab: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, output = _main(["experiment", *args], seed_lab, capsys, monkeypatch)
    _calm(code, output)
    assert code != 0


def test_the_count_of_hostile_inputs_is_over_a_hundred() -> None:
    assert len(SYMPTOMS) + 3 * len(CONFIGS) + len(ARGV_CASES) + len(EXPERIMENT_ARGS) > 100


# --- the ones that launch something ---------------------------------------------------------

DYING = tiny_server("""
print("RuntimeError: CUDA error: an illegal memory access was encountered", flush=True)
os._exit(3)
""")


def test_a_server_that_dies_mid_benchmark_is_reported_as_exited(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"server.py": DYING, "x.py": "X = 1\n"})
    (repo / "x.py").write_text("X = 2\n")
    (repo / "debug-agent.toml").write_text(
        "[launch]\ncommand = '{python} server.py {port}'\ntimeout_s = 30\n[bench]\nwarmup = 0\n"
    )
    done = run_cli("experiment", "--samples", "1", "--metric", "tok_s", cwd=repo)
    assert_one_line_error(
        done,
        "server exited with code 3 during the benchmark",
        "illegal memory access",
        "server-1.log",
    )
    # in an investigation: the launch is unresolved because the server ended while measured,
    # not because it "did not start (twice)"; a death is an answer about the tree, not retried
    investigated = run_cli("investigate", "--symptom", "tok/s 10 (was 20)", "--json", cwd=repo)
    result = json.loads(investigated.stdout)
    transcript = (Path(result["session_dir"]) / "transcript.jsonl").read_text()
    assert "its server ended while it was measured" in transcript, transcript[-3000:]
    assert "did not start" not in transcript
    assert not list(Path(result["session_dir"]).glob("launches/*-start-failed"))


def test_a_bench_of_many_values_keeps_a_bounded_record(tmp_path: Path) -> None:
    """A value per token is millions a launch: each launch is read from all of them, and the
    session keeps 1001 order statistics (every checkpoint copied them all: 88 MB of state.json
    and 1.6 GB of memory for four launches of two million)."""
    bench = "for i in range(1, 20001):\n    print(f'latency_ms: {i}')\n"
    repo = bench_repo(tmp_path, bench)
    done = run_cli("investigate", "--symptom", "latency 20000ms (was 10000)", "--json", cwd=repo)
    result = json.loads(done.stdout)
    session = Path(result["session_dir"])
    state = json.loads((session / "state.json").read_text())
    assert state["configs"], (result["status"], result["notes"])
    launch = next(iter(state["configs"].values()))["launches"][0]
    assert launch["value"] == 10000.5 and launch["requests"] == 20000  # all of them
    kept = launch["samples"]
    assert len(kept) == 1001 and kept[0] == 1 and kept[-1] == 20000 and kept[500] == 10001
    assert "median of 20000" in (session / "transcript.jsonl").read_text()
    assert (session / "state.json").stat().st_size < 500_000


# 1e308: finite, but its mean overflowed (an OverflowError from fsum stopped the investigation)
NAN_BENCH = "".join(f"print('latency_ms: {v}')\n" for v in ("nan", "-12", "1e308", "inf"))


def test_nan_from_a_bench_is_not_a_measurement(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path, {"server.py": tiny_server("pass"), "bench.py": NAN_BENCH, "x.py": "X = 1\n"}
    )
    (repo / "x.py").write_text("X = 2\n")
    (repo / "debug-agent.toml").write_text(
        "[launch]\ncommand = '{python} server.py {port}'\ntimeout_s = 30\n[bench]\n"
        "kind = 'command'\ncommand = '{python} bench.py'\nmetric = 'latency_ms'\n"
        "metric_regex = 'latency_ms: (\\S+)'\n"
    )
    done = run_cli("experiment", cwd=repo)
    assert_one_line_error(done, "latency_ms = nan, -12, 1e+308: not a measurement")


def test_sessions_in_a_pipe_show_whole_ids_and_json(tmp_path: Path) -> None:
    lab = tmp_path / "lab"
    create_lab("seed", lab)
    done = investigate_seed(lab, "--max-launches", "2")
    session = json.loads(done.stdout)["session"]
    listed = run_cli("sessions", cwd=lab)  # stdout is a pipe here, as in `| grep`
    assert any(line.split("\t")[0] == session for line in listed.stdout.splitlines())
    as_json = json.loads(run_cli("sessions", "--json", cwd=lab).stdout)
    assert session in [s["id"] for s in as_json]


def test_help_shows_defaults_whole() -> None:
    text = " ".join(run_cli("investigate", "--help").stdout.split())
    assert "(default: [budget] or 40)" in text and "(default: [budget] or 60)" in text


def test_an_unwritable_sessions_folder_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    done = run_cli(
        "investigate",
        "--symptom",
        "verify 29ms",
        cwd=tmp_path,
        env={"DEBUG_AGENT_SESSIONS_DIR": str(tmp_path / "file" / "sessions")},
    )
    assert_one_line_error(done, "cannot write the sessions folder")
    # mkdir's "File exists" said nothing of what was in the way: the file on the path is named
    assert f"{tmp_path / 'file'} is a file, not a folder" in done.stderr
    done = run_cli(
        "investigate",
        "--symptom",
        "verify 29ms",
        cwd=tmp_path,
        env={"DEBUG_AGENT_SESSIONS_DIR": str(tmp_path / "file")},
    )
    assert "it is a file, not a folder" in done.stderr
    done = run_cli(
        "investigate",
        "--symptom",
        "verify 29ms",
        cwd=tmp_path,
        env={"DEBUG_AGENT_STATE_DIR": "/sys/fs/debug-agent-state"},
    )
    assert_one_line_error(done, "cannot write the state folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
