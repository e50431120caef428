"""A target that is not SGLang: any server command and any benchmark command (regex metric),
investigated end to end; plus `init` and `check`."""

from __future__ import annotations

import json
import shlex
import textwrap
import tomllib
from pathlib import Path

import pytest

from tests.conftest import assert_one_line_error, make_repo, run_cli
from tools.lab.create import create_lab

SERVER = textwrap.dedent("""\
    import sys, time
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from work import cost_ms

    class H(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/work":
                time.sleep(cost_ms() / 1000)
            body = b"ok"
            self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers()
            self.wfile.write(body)
        def log_message(self, *args): pass

    HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
""")
WORK = "def cost_ms():\n    base = 20.0\n    return base\n"
BENCH = textwrap.dedent("""\
    import sys, time, urllib.request
    for _ in range(6):
        start = time.perf_counter()
        urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/work").read()
        print(f"latency_ms: {(time.perf_counter() - start) * 1000:.2f}")
""")
CONFIG = textwrap.dedent("""\
    [launch]
    command = "{python} server.py {port}"
    timeout_s = 30
    [bench]
    kind = "command"
    command = "{python} bench.py {port}"
    metric = "latency_ms"
    unit = "ms"
    metric_regex = "latency_ms: ([0-9.]+)"
""")


def test_a_generic_server_and_command_bench_end_to_end(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path, {"server.py": SERVER, "work.py": WORK, "bench.py": BENCH, "README.md": "# demo\n"}
    )
    (repo / "work.py").write_text(WORK.replace("return base", "return base * 2  # retry once"))
    (repo / "README.md").write_text("# demo\n\nA server that works.\n")
    (repo / "debug-agent.toml").write_text(CONFIG)
    assert run_cli("check", cwd=repo).returncode == 0
    done = run_cli("investigate", "--symptom", "latency 40ms", "--json", cwd=repo, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["status"] == "confirmed", result["notes"]
    assert [c["file"] for c in result["culprits"]] == ["work.py"]
    assert result["metric"]["name"] == "latency_ms"
    assert result["metric"]["bad"] > 1.5 * result["metric"]["good"]


def test_init_writes_a_config_check_accepts(tmp_path: Path) -> None:
    lab = tmp_path / "lab"
    create_lab("seed", lab)
    (lab / "debug-agent.toml").unlink()
    done = run_cli("init", cwd=lab)
    assert done.returncode == 0, done.stderr
    assert "sglang.launch_server" in (lab / "debug-agent.toml").read_text()
    done = run_cli("check", cwd=lab)
    assert done.returncode == 0 and done.stdout.startswith("ok:"), done.stderr
    assert_one_line_error(run_cli("init", cwd=lab), "exists (use --force")


def test_init_replaces_a_linked_config_and_never_writes_through_it(tmp_path: Path) -> None:
    """A config linked to a file shared with other projects was overwritten there by --force;
    a dangling link was written through by plain init (a file made where the link pointed)."""
    lab = tmp_path / "lab"
    create_lab("seed", lab)
    config = lab / "debug-agent.toml"
    shared, nowhere = tmp_path / "shared.toml", tmp_path / "nowhere.toml"
    shared.write_text("# another project's\n")
    config.unlink()
    config.symlink_to(nowhere)
    assert_one_line_error(run_cli("init", cwd=lab), "exists (use --force")
    assert not nowhere.exists()
    config.unlink()
    config.symlink_to(shared)
    assert run_cli("init", "--force", cwd=lab).returncode == 0
    assert shared.read_text() == "# another project's\n"
    assert not config.is_symlink() and "sglang.launch_server" in config.read_text()


@pytest.mark.parametrize("server", ["sglang", "vllm"])
def test_init_for_a_named_server_quotes_any_model_path(server: str, tmp_path: Path) -> None:
    """A model path with quotes, a backslash or a space is one word of the launch, and the
    config is valid TOML; a path with a line break or an escape is refused."""
    repo = make_repo(tmp_path)
    for model in ('/models/my "best" model', "C:\\models\\x", "org/it's"):
        done = run_cli("init", "--force", "--server", server, "--model", model, cwd=repo)
        assert done.returncode == 0, done.stderr
        command = tomllib.loads((repo / "debug-agent.toml").read_text())["launch"]["command"]
        words = shlex.split(command)
        assert words[words.index("--port") - 1] == model, command
        assert run_cli("check", cwd=repo).returncode == 0
    for model in ("a\nb", "\x1b[31mred", " "):
        assert_one_line_error(
            run_cli("init", "--force", "--server", server, "--model", model, cwd=repo),
            "is not a model path or name",
        )
    assert_one_line_error(run_cli("init", "--server", "tgi", cwd=repo), "--server 'tgi'")


def test_check_says_what_is_wrong(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "debug-agent.toml").write_text(
        '[target]\ngood = "nope"\n[launch]\ncommand = "no-such-server --port {port}"\n'
    )
    assert_one_line_error(
        run_cli("check", cwd=repo),
        "unknown git ref 'nope'",
        "'no-such-server' is not an executable",
    )
    (repo / "debug-agent.toml").write_text('[launch]\ncommand = "x"\n[host]\nssh = "a@b"\n')
    assert_one_line_error(run_cli("check", cwd=repo), "host")
    assert_one_line_error(run_cli("init", cwd=tmp_path), "not a git repository")


BLOCK_BENCH = textwrap.dedent("""\
    import sys, time, urllib.request
    start = time.perf_counter()
    urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/work").read()
    ms = (time.perf_counter() - start) * 1000
    print("============ Serving Benchmark Result ============")
    print(f"{'Successful requests:':<40} {1:<10}")
    print(f"{'Median TTFT (ms):':<40} {ms:<10.2f}")
    print("==================================================")
""")


def test_a_command_bench_read_by_its_result_block(tmp_path: Path) -> None:
    """A bench that prints a bench_serving result block needs no regex: `check` accepts it and
    a launch reads the metric from the block; a metric no block prints is one line."""
    repo = make_repo(tmp_path, {"server.py": SERVER, "work.py": WORK, "bench.py": BLOCK_BENCH})
    (repo / "work.py").write_text(WORK.replace("20.0", "30.0"))
    config = CONFIG.replace('metric_regex = "latency_ms: ([0-9.]+)"\n', "")
    (repo / "debug-agent.toml").write_text(config.replace("latency_ms", "median_ttft_ms"))
    assert run_cli("check", cwd=repo).returncode == 0
    done = run_cli("experiment", "--json", cwd=repo, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    metric = json.loads(done.stdout)["metric"]
    assert metric["name"] == "median_ttft_ms" and metric["median"] >= 30, metric
    (repo / "debug-agent.toml").write_text(config)
    assert_one_line_error(
        run_cli("check", cwd=repo), "needs metric_regex", "bench_serving result block prints"
    )


def test_a_subfolder_of_the_repository_finds_its_config(tmp_path: Path) -> None:
    """As git finds its own from a subfolder: before, `check` there said to write a config
    (which `init` there had written at the root), and `investigate` took the seed lab."""
    repo = make_repo(
        tmp_path, {"server.py": SERVER, "work.py": WORK, "bench.py": BENCH, "docs/a.md": "a\n"}
    )
    (repo / "work.py").write_text(WORK.replace("20.0", "30.0"))
    (repo / "debug-agent.toml").write_text(CONFIG)
    inside = repo / "docs"
    done = run_cli("check", cwd=inside)
    assert done.returncode == 0 and f"repo {repo}" in done.stdout, done.stderr
    done = run_cli("experiment", "--json", cwd=inside, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["metric"]["median"] >= 30
    done = run_cli("investigate", "--max-launches", "2", cwd=inside, timeout=120)
    assert f"Investigating the target in {repo / 'debug-agent.toml'}" in done.stdout + done.stderr
