"""`debug-agent init` writes a commented debug-agent.toml; `check` says what is wrong with one."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from pydantic import BaseModel

from tools.bench.command import Placeholders
from tools.cluster.check import cluster_problems
from tools.config import CONFIG_NAME, TargetConfig, load_config
from tools.errors import ToolError
from tools.own_files import replace_text
from tools.repo.candidates import open_repo, resolve_ref
from tools.stack.check import stack_problems
from tools.stack.good_env import with_good_env
from tools.visible import visible

TEMPLATE = """\
# debug-agent target config, written by 'debug-agent init'. Every key is explained; change what
# does not fit, then run 'debug-agent check'.

[target]
repo = "."          # the git repository under investigation
good = "{good}"       # a known-good ref; the bad state is the working tree (and commits after it)

[launch]
# the server's command line: {{port}} is a free port picked per launch, {{python}} this Python
command = {command}
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
# metric_jsonl = "file" with metric_key = "key" (the records' other numeric keys are kept too:
#   tok_s, accept_len and verify_ms let a speculative throughput be split into its parts)

[budget]
max_launches = 40
max_minutes = 240

# [host]            # optional: the repository and GPUs are on another machine, over SSH
# ssh = "me@gpu-node"   # user@host[:port] or a ~/.ssh/config alias; [target] repo is its path
# python = "python3"    # the node's Python

# [profile]         # the traced references' profiles (where the time moved), on by default
# enabled = true
# interval_ms = 10

# [llm]             # optional: an OpenAI-compatible endpoint for the LLM reasoner
# base_url = "http://127.0.0.1:30001/v1"
# model = "..."
{stack}"""


# a format value, not a template: its braces are written as they are
STACK = """
# [stack]           # optional: an upgrade of the package set ("I upgraded the image")
# good = "freeze-old.txt"   # pip freeze, ==-pinned requirements, uv.lock or pylock.toml
# bad = "current"           # the same, or what {python} has installed now
# wheels = "wheels/"        # searched first; with offline = true, the only source
# repos = { sglang = "https://github.com/sgl-project/sglang" }  # a package's git history:
#                           # inside its first slow release, its commits are bisected
"""

LIBRARY_TEMPLATE = """\
# debug-agent target config, written by 'debug-agent init' for a library (no server found here).
# There is no server to launch: each launch runs the bench command below in a scratch copy of this
# repository. Edit [bench] (the command, the metric's name and the regex that reads it), write
# the bench script, then run 'debug-agent check'.

[target]
repo = "."          # the git repository under investigation
good = "{good}"       # a known-good ref; the bad state is the working tree (and commits after it)

[bench]
kind = "command"
# {python_note};
# {{worktree}} is the scratch copy's root (import the library from there: the script puts its
# first argument first on sys.path), {{config_dir}} the folder of this file (.debug-agent/ is
# never taken for a change under investigation)
command = "{python} {{config_dir}}/.debug-agent/bench.py {{worktree}}{src}"
metric = "time_ms"    # the symptom names it: "time_ms 265 (was 7)"
unit = "ms"           # ms, s or us (lower is better), or a rate such as rows/s (higher is better)
metric_regex = "time_ms: ([0-9.]+)"   # group 1 of each match is one sample
timeout_s = 600

[budget]
max_launches = 40
max_minutes = 60

# [llm]             # optional: an OpenAI-compatible endpoint for the LLM reasoner
# base_url = "http://127.0.0.1:30001/v1"
# model = "..."
{stack}"""

# words in a repository's source that say it runs a server
SERVER_SIGNS = (
    "launch_server",
    "serve_forever",
    "HTTPServer(",
    "uvicorn",
    "FastAPI(",
    "Flask(",
    "aiohttp.web",
    "grpc.server(",
)


def _is_sglang(root: Path) -> bool:
    return (root / "python" / "sglang" / "launch_server.py").exists() or (
        root / "python" / "sglang" / "srt"
    ).is_dir()


def _is_vllm(root: Path) -> bool:
    return (root / "vllm" / "model_executor" / "models" / "registry.py").exists()


def server_launch(server: str, model: str | None) -> tuple[str, str, str]:
    """(command, env, bench kind) of a launch of `server` from its checkout."""
    model = shlex.quote(model) if model else None  # one word however it is spelled
    if server == "vllm":
        # the OpenAI API server of the checkout; compiled kernels (vllm/*.so) must be importable
        # from the scratch tree too: an editable install built with VLLM_USE_PRECOMPILED=1
        command = (
            "{python} -m vllm.entrypoints.openai.api_server --model "
            f"{model or 'meta-llama/Llama-3.1-8B-Instruct'} --port {{port}}"
        )
        return command, '{ PYTHONPATH = "." }', "openai"
    command = (
        "{python} -m sglang.launch_server --model-path "
        f"{model or 'meta-llama/Llama-3.1-8B-Instruct'} --port {{port}}"
    )
    return command, '{ PYTHONPATH = "python" }', "generate"


def _serves(root: Path, tracked: list[str]) -> bool:
    """Whether the repository's Python source (its first 2000 tracked files) starts a server."""
    for name in [t for t in tracked if t.endswith(".py")][:2000]:
        try:
            text = (root / name).read_text(errors="replace")
        except OSError:
            continue
        if any(sign in text for sign in SERVER_SIGNS):
            return True
    return (root / "serve").exists()


def project_python(root: Path) -> str:
    """The project's interpreter, which has its dependencies: the active virtual environment's
    (when it is not debug-agent's own), else the repository's .venv or venv; else {python}."""
    active = os.environ.get("VIRTUAL_ENV")
    candidates = [Path(active) / "bin" / "python"] if active else []
    candidates += [root / ".venv" / "bin" / "python", root / "venv" / "bin" / "python"]
    for python in candidates:
        if python.exists() and python.parent.parent.resolve() != Path(sys.prefix).resolve():
            return str(python)
    return "{python}"


def write_config(cwd: Path, model: str | None, force: bool, server: str | None = None) -> Path:
    """A commented config: an SGLang or vLLM launch (named, or told by the checkout), another
    server's, or a library's command bench."""
    if model is not None and (not model.isprintable() or not model.strip()):
        raise ToolError(f"--model {visible(model)!r} is not a model path or name")
    repo = open_repo(cwd)
    root = Path(repo.working_tree_dir or cwd)
    path = root / CONFIG_NAME
    if (path.exists() or path.is_symlink()) and not force:  # a dangling link was written through
        raise ToolError(f"{path} exists (use --force to overwrite it)")
    server = server or ("sglang" if _is_sglang(root) else "vllm" if _is_vllm(root) else None)
    if server is None and not _serves(root, repo.git.ls_files().splitlines()):
        python = project_python(root)
        note = (
            "the interpreter is the project's (its virtual environment)"
            if python != "{python}"
            else "{python} is debug-agent's Python (name the project's if it lacks its packages)"
        )
        src = "/src" if any((root / "src").glob("*/__init__.py")) else ""  # a src layout
        text = LIBRARY_TEMPLATE.format(
            good="HEAD", python=python, python_note=note, src=src, stack=STACK
        )
        replace_text(path, text)  # a link is replaced: the file it names may be another's
        return path
    if server is not None:
        command, env, kind = server_launch(server, model)
    else:
        command, env, kind = "./serve --port {port}", "{ }", "openai"
    # a TOML string: JSON's escapes are TOML's (a quote or a backslash in a model path)
    quoted = json.dumps(command, ensure_ascii=False)
    text = TEMPLATE.format(good="HEAD", command=quoted, env=env, bench_kind=kind, stack=STACK)
    replace_text(path, text)
    return path


def edit_hint(path: Path) -> str:
    """What to edit in the config `write_config` wrote."""
    if not re.search(r"^\[launch\]", path.read_text(), re.MULTILINE):
        return (
            "a library (no server found): set [bench] command, metric and metric_regex, and "
            f"write the bench script ({path.parent / '.debug-agent' / 'bench.py'}) that prints "
            "'time_ms: <value>'"
        )
    return "set [launch] command to your server's command line and [bench] to its benchmark"


class CheckReport(BaseModel):
    config: str
    repo: str
    good: str
    good_sha: str
    launch: list[str]


def _executable(word: str, cwd: Path) -> bool:
    return word == "{python}" or shutil.which(word) is not None or (cwd / word).exists()


def check_config(path: Path, good: str | None = None, good_env: Path | None = None) -> CheckReport:
    """Everything that can be checked without launching; one line saying all that is wrong.
    `good` stands for the config's good ref (investigate --good), `good_env` for its good
    package set (--good-env)."""
    config: TargetConfig = with_good_env(load_config(path), good_env)
    if good:
        config.target.good = good
    if config.host is not None:
        return _check_remote(path, config)
    config_dir = config.config_dir or path.resolve().parent  # where it was found
    problems = []
    repo = open_repo(config_dir / config.target.repo)
    root = Path(repo.working_tree_dir or config_dir)
    try:
        good_sha = resolve_ref(repo, config.target.good)
    except ToolError as e:
        problems.append(str(e))
        good_sha = ""
    argv = shlex.split(config.launch.command)  # the config's validation split it already
    if not config.bench_only and not _executable(argv[0], config_dir):
        problems.append(
            f"launch.command: {argv[0]!r} is not an executable on PATH or in {config_dir}"
        )
    problems += cluster_problems(config.cluster)
    problems += stack_problems(config, config_dir)
    run_dir = config_dir if config_dir.is_relative_to(root.resolve()) else root
    problems += _command_problems(
        config,
        lambda word: _executable(word, run_dir),
        lambda file: (run_dir / file).exists(),
        Placeholders(sys.executable, root, config_dir),
    )
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

    def exists_on_node(file: str) -> bool:
        code, _, _ = host.run(f"cd {shlex.quote(state['root'])} && test -e {shlex.quote(file)}")
        return code == 0

    problems = []
    argv = shlex.split(config.launch.command)  # the config's validation split it already
    if not config.bench_only and not on_node(argv[0]):
        problems.append(
            f"launch.command: {argv[0]!r} is not an executable on {host.endpoint.alias}"
        )
    places = Placeholders(config.host.python, PurePosixPath(state["root"]), config.config_dir)
    problems += _command_problems(config, on_node, exists_on_node, places)
    if problems:
        raise ToolError(f"{path}: " + "; ".join(problems))
    return CheckReport(
        config=str(path),
        repo=f"{config.host.ssh}:{state['root']}",
        good=config.target.good,
        good_sha=state["sha"],
        launch=argv,
    )


def _command_problems(
    config: TargetConfig,
    executable: Callable[[str], bool],
    exists: Callable[[str], bool],
    places: Placeholders,
) -> list[str]:
    """The launch's port, the bench's executable and script, and how its metric is read.
    `places` fills {python}, {worktree} (the repository's root) and {config_dir}."""
    problems = []
    launch = config.launch.command
    if not config.bench_only:
        from tools.measure import launch_port

        try:
            launch_port(launch, lambda: 0)  # how the launch will find its port
        except (ToolError, ValueError) as e:
            problems.append(str(e))
    if config.build.command:  # run in the scratch tree, as the bench
        problems += _command_line_problems(
            config.build.command, executable, exists, places, "build.command"
        )
    bench = config.bench
    if bench.kind == "command":
        problems += _command_line_problems(bench.command or "", executable, exists, places)
        from tools.bench.jsonl import BENCH_KEYS  # a result block's rows, read by a run

        read = bench.metric_regex or (bench.metric_jsonl and bench.metric_key)
        if not read and bench.metric not in BENCH_KEYS:
            problems.append(
                "bench kind 'command' needs metric_regex, metric_jsonl with metric_key, or "
                f"a metric that a bench_serving result block prints ({', '.join(BENCH_KEYS)})"
            )
    return problems


_PYTHON = re.compile(r"python[0-9.]*")


def bench_script(words: list[str]) -> str | None:
    """The script a Python command line runs: its first argument after the interpreter's own
    options, when it looks like a file (a .py name or a path); None for -m, -c or none."""
    if not words or not (words[0] == "{python}" or _PYTHON.fullmatch(Path(words[0]).name)):
        return None
    for word in words[1:]:
        if word in ("-m", "-c") or word.startswith(("-m", "-c")):
            return None
        if word.startswith("-"):
            continue
        return word if word.endswith(".py") or "/" in word else None
    return None


def _command_line_problems(
    command: str,
    executable: Callable[[str], bool],
    exists: Callable[[str], bool],
    places: Placeholders,
    where: str = "bench.command",
) -> list[str]:
    words = shlex.split(command)  # the config's validation split it already

    def filled(word: str) -> str | None:  # None: it depends on the launch ({port}, ...)
        try:
            word = places.fill(word)
        except ToolError:
            return None
        return None if "{" in word else word

    problems = []
    first = filled(words[0]) if words else None
    if first is not None and words[0] != "{python}" and not executable(first):
        problems.append(f"{where}: {first!r} is not an executable")
    script = bench_script(words)
    path = filled(script) if script else None
    if path is not None and not exists(path):
        problems.append(f"{where}: the script {path!r} does not exist")
    return problems
