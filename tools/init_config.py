"""`debug-agent init` writes a commented debug-agent.toml; `check` says what is wrong with one."""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from tools.config import CONFIG_NAME, TargetConfig, load_config
from tools.errors import ToolError
from tools.repo.candidates import open_repo, resolve_ref

TEMPLATE = """\
# debug-agent target config, written by 'debug-agent init'. Every key is explained; change what
# does not fit, then run 'debug-agent check'.

[target]
repo = "."          # the git repository under investigation
good = "{good}"       # a known-good ref; the bad state is the working tree (and commits after it)

[launch]
# the server's command line: {{port}} is a free port picked per launch, {{python}} this Python
command = "{command}"
env = {env}
ready = "/health"   # an HTTP path to poll, or "log:<regex>" for a log line
timeout_s = 900     # real servers take minutes to load

# [baseline]        # how the good reference was launched, where that differs from [launch]
# env = {{ }}
# command = "..."

[bench]
kind = "{bench_kind}"   # generate (SGLang /generate) | openai (/v1/completions) | command
requests = 16
concurrency = 1
input_len = 128
output_len = 256
warmup = 2
# per_launch = "best"   # a launch's value is its requests' median; "best" (the fastest request)
#                       # for a shared VM whose CPU slows for seconds at a time
# kind = "command": command = "...", metric = "name", and metric_regex = "..." (group 1) or
# metric_jsonl = "file" with metric_key = "key"

[budget]
max_launches = 40
max_minutes = 240

# [host]            # optional: the repository and GPUs are on another machine, over SSH
# ssh = "me@gpu-node"   # user@host[:port] or a ~/.ssh/config alias; [target] repo is its path
# python = "python3"    # the node's Python

# [llm]             # optional: an OpenAI-compatible endpoint for the LLM reasoner
# base_url = "http://127.0.0.1:30001/v1"
# model = "..."
"""


def _is_sglang(root: Path) -> bool:
    return (root / "python" / "sglang" / "launch_server.py").exists() or (
        root / "python" / "sglang" / "srt"
    ).is_dir()


def write_config(cwd: Path, model: str | None, force: bool) -> Path:
    repo = open_repo(cwd)
    root = Path(repo.working_tree_dir or cwd)
    path = root / CONFIG_NAME
    if path.exists() and not force:
        raise ToolError(f"{path} exists (use --force to overwrite it)")
    if _is_sglang(root):
        command = (
            "{python} -m sglang.launch_server --model-path "
            f"{model or 'meta-llama/Llama-3.1-8B-Instruct'} --port {{port}}"
        )
        env, kind = '{ PYTHONPATH = "python" }', "generate"
    else:
        command, env, kind = "./serve --port {port}", "{ }", "openai"
    path.write_text(TEMPLATE.format(good="HEAD", command=command, env=env, bench_kind=kind))
    return path


class CheckReport(BaseModel):
    config: str
    repo: str
    good: str
    good_sha: str
    launch: list[str]


def _executable(word: str, cwd: Path) -> bool:
    return word == "{python}" or shutil.which(word) is not None or (cwd / word).exists()


def check_config(path: Path, good: str | None = None) -> CheckReport:
    """Everything that can be checked without launching; one line saying all that is wrong.
    `good` stands for the config's good ref (investigate --good)."""
    config: TargetConfig = load_config(path)
    if good:
        config.target.good = good
    if config.host is not None:
        return _check_remote(path, config)
    config_dir = (path if path.is_dir() else path.parent).resolve()
    problems = []
    repo = open_repo(config_dir / config.target.repo)
    root = Path(repo.working_tree_dir or config_dir)
    try:
        good_sha = resolve_ref(repo, config.target.good)
    except ToolError as e:
        problems.append(str(e))
        good_sha = ""
    try:
        argv = shlex.split(config.launch.command)
    except ValueError as e:
        argv = []
        problems.append(f"launch.command cannot be split into words: {e}")
    if argv and not _executable(argv[0], config_dir):
        problems.append(
            f"launch.command: {argv[0]!r} is not an executable on PATH or in {config_dir}"
        )
    problems += _command_problems(config, lambda word: _executable(word, config_dir))
    if problems:
        raise ToolError(f"{path}: " + "; ".join(problems))
    return CheckReport(
        config=str(path), repo=str(root), good=config.target.good, good_sha=good_sha, launch=argv
    )


def _check_remote(path: Path, config: TargetConfig) -> CheckReport:
    """A [host] target: reach the node, find the repository and the good ref, and the commands'
    executables on the node's PATH (or in the repository)."""
    from tools.node.ssh_host import connect
    from tools.repo.target import node_state

    assert config.host is not None
    state = node_state(config)  # the connection, the repository, the good ref: one line each
    host = connect(config.host)

    def on_node(word: str) -> bool:
        word = config.host.python if word == "{python}" else word  # type: ignore[union-attr]
        code, _, _ = host.run(
            f"cd {shlex.quote(state['root'])} && command -v {shlex.quote(word)} >/dev/null"
        )
        return code == 0

    problems = []
    try:
        argv = shlex.split(config.launch.command)
    except ValueError as e:
        argv = []
        problems.append(f"launch.command cannot be split into words: {e}")
    if argv and not on_node(argv[0]):
        problems.append(
            f"launch.command: {argv[0]!r} is not an executable on {host.endpoint.alias}"
        )
    problems += _command_problems(config, on_node)
    if problems:
        raise ToolError(f"{path}: " + "; ".join(problems))
    return CheckReport(
        config=str(path),
        repo=f"{config.host.ssh}:{state['root']}",
        good=config.target.good,
        good_sha=state["sha"],
        launch=argv,
    )


def _command_problems(config: TargetConfig, executable: Callable[[str], bool]) -> list[str]:
    problems = []
    if "{port}" not in config.launch.command and "--port" not in config.launch.command:
        problems.append("launch.command has neither {port} nor a fixed --port N")
    bench = config.bench
    if bench.kind == "command":
        words = shlex.split(bench.command or "")
        if words and "{" not in words[0] and not executable(words[0]):
            problems.append(f"bench.command: {words[0]!r} is not an executable")
        if bench.metric_regex:
            try:
                re.compile(bench.metric_regex)
            except re.error as e:
                problems.append(f"bench.metric_regex does not compile: {e}")
        elif not (bench.metric_jsonl and bench.metric_key):
            problems.append(
                "bench kind 'command' needs metric_regex, or metric_jsonl with metric_key"
            )
    return problems
