"""The target config, `debug-agent.toml`: how to launch and benchmark the server under study.

A library has no server: without [launch] (or with one holding only its env), a `command` bench
is the launch itself (run in the scratch tree; no port, no ready wait).
"""

from __future__ import annotations

import shlex
import sys
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from tools import secrets
from tools.config_values import check_env, command_words, nul_holder, valid_regex
from tools.errors import ToolError, first_problem
from tools.folders import at_repo_root
from tools.limits import MAX_COUNT, MAX_SECONDS, MAX_TOKENS
from tools.placeholders import BENCH, BUILD, LAUNCH
from tools.toml_text import parse_toml

CONFIG_NAME = "debug-agent.toml"


class ConfigError(ToolError):
    """The config is missing or wrong; the message is one line for the user."""


class _Section(BaseModel):
    # TOML spells inf and nan: neither is a timeout, a budget or a share
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


def _environment(env: dict[str, str]) -> dict[str, str]:
    for name, value in env.items():
        check_env(name, value)
    return env


Environment = Annotated[dict[str, str], AfterValidator(_environment)]


class TargetSection(_Section):
    repo: str = "."
    good: str = "HEAD"


class LaunchSection(_Section):
    command: str
    env: Environment = Field(default_factory=dict)
    ready: str = "/health"  # an HTTP path to poll, or "log:<regex>" to wait for a log line
    timeout_s: float = Field(default=900.0, gt=0, le=MAX_SECONDS)

    @field_validator("command")
    @classmethod
    def _command_words(cls, command: str) -> str:
        return command_words(command, "the command") or command

    @field_validator("ready")
    @classmethod
    def _ready_form(cls, ready: str) -> str:
        if ready == "log:":
            raise ValueError('the log: pattern is empty: "log:<regex>" waits for a line it matches')
        if ready.startswith("log:"):
            valid_regex(ready[4:], "the log: pattern")
            return ready
        if not ready.startswith("/"):
            raise ValueError(
                f"{ready!r} is neither an HTTP path (starting with '/', e.g. "
                '"/health") nor "log:<regex>"'
            )
        return ready


class BaselineSection(_Section):
    """How the good reference was launched, where that differs from [launch]."""

    command: str | None = None
    env: Environment | None = None

    @field_validator("command")
    @classmethod
    def _command_words(cls, command: str | None) -> str | None:
        return command_words(command, "the command")


class BenchSection(_Section):
    kind: Literal["generate", "openai", "command"] = "generate"
    requests: int = Field(default=8, ge=1, le=MAX_COUNT)
    concurrency: int = Field(default=1, ge=1, le=MAX_COUNT)
    input_len: int = Field(default=32, ge=1, le=MAX_TOKENS)
    output_len: int = Field(default=256, ge=1, le=MAX_TOKENS)
    warmup: int = Field(default=1, ge=0, le=MAX_COUNT)
    timeout_s: float = Field(default=1800.0, gt=0, le=MAX_SECONDS)  # the whole bench, warm-up too
    # a launch's value: the median of its requests, or the best one. "best" suits a host whose
    # interference only ever slows requests (a shared VM: periods of a 2x slower CPU), but it
    # hides a regression that slows only some requests
    per_launch: Literal["median", "best"] = "median"
    # kind = "command": any benchmark command ({base_url}, {port}, {python}, {worktree} the
    # scratch tree's root, {config_dir} the folder of debug-agent.toml are filled in); its
    # metric comes from `metric_regex` (group 1 of each match is one sample) or from the
    # `metric_key` of each record of the JSONL file `metric_jsonl`, or from an
    # sglang.bench_serving result block in its output
    command: str | None = None
    metric: str = "metric"
    unit: str = ""
    metric_regex: str | None = None
    metric_jsonl: str | None = None
    metric_key: str | None = None

    def workload(self) -> str:
        """What a launch measures, in words (the reproduction check quotes it)."""
        if self.kind == "command":
            return f"the command bench `{self.command}`, metric {self.metric}"
        endpoint = "/generate" if self.kind == "generate" else "/v1/completions"
        return (
            f"{self.requests} requests to {endpoint} at concurrency {self.concurrency}, "
            f"input {self.input_len} and output {self.output_len} tokens"
        )

    @model_validator(mode="after")
    def _command_needs_a_command(self) -> BenchSection:
        if self.kind == "command" and not self.command:
            raise ValueError('kind = "command" needs bench.command')
        command_words(self.command, "bench.command", BENCH)
        valid_regex(self.metric_regex, "bench.metric_regex")
        if not self.metric.strip() or not self.metric.isprintable():
            raise ValueError('bench.metric is the metric\'s name: give one, e.g. "latency_ms"')
        if bool(self.metric_jsonl) != bool(self.metric_key):  # one alone was ignored
            raise ValueError("bench.metric_jsonl and bench.metric_key go together: give both")
        if self.metric_regex and self.metric_jsonl:  # the regex was read, the file ignored
            raise ValueError(
                "bench.metric_regex and bench.metric_jsonl each say where the value is: give one"
            )
        return self


# the placeholders that need a server: a bench without [launch] cannot use them
SERVER_PLACEHOLDERS = ("{port}", "{base_url}")


class BuildSection(_Section):
    """A step run in each scratch tree before its launches (tools/build_step.py)."""

    command: str | None = None  # {python}, {worktree} and {config_dir} are filled in
    env: Environment = Field(default_factory=dict)
    timeout_s: float = Field(default=1800.0, gt=0, le=MAX_SECONDS)

    @field_validator("command")
    @classmethod
    def _command_words(cls, command: str | None) -> str | None:
        if command and any(p in command for p in SERVER_PLACEHOLDERS):
            raise ValueError("build.command runs before any server: no {port} or {base_url}")
        return command_words(command, "build.command", BUILD)


class BudgetSection(_Section):
    max_launches: int = Field(default=40, ge=2, le=MAX_COUNT)
    max_minutes: float = Field(default=60.0, gt=0, le=MAX_SECONDS / 60)


class JudgeSection(_Section):
    """What the verdict demands of a culprit."""

    # named only when the low end of its share's 95 % interval is at least this share of the
    # gap; below it, "negligible" (with its interval), never a culprit
    min_share: float = Field(default=0.05, ge=0.0, lt=1.0)


class ProfileSection(_Section):
    """Profiles of the traced reference launches (where the time moved, as priors)."""

    enabled: bool = True  # sample every Python process of the traced launches
    interval_ms: float = Field(default=10.0, gt=0.1, le=1000.0)  # between two samples
    torch: bool = True  # SGLang's torch profiler too, where the server has /start_profile
    torch_steps: int = Field(
        default=0, ge=0, le=MAX_COUNT
    )  # forward steps it records (0: the whole bench)


class LLMSection(_Section):
    """The LLM reasoner (optional): any OpenAI-compatible endpoint; OPENAI_API_KEY from env."""

    base_url: str | None = None
    model: str | None = None
    max_calls: int = Field(default=20, ge=1, le=MAX_COUNT)
    max_cost: float | None = Field(default=None, gt=0)
    usd_per_mtok_in: float = Field(default=0.0, ge=0)
    usd_per_mtok_out: float = Field(default=0.0, ge=0)
    timeout_s: float = Field(default=120.0, gt=0, le=MAX_SECONDS)  # one unanswered: not asked again


class HostSection(_Section):
    """The node the target lives on, reached over SSH (key auth; ~/.ssh/config is honoured)."""

    ssh: str  # "user@host[:port]", or a Host alias from ~/.ssh/config
    identity: str | None = None  # a private key file; default: the agent, ~/.ssh/config, id_*
    known_hosts: str | None = None  # in addition to ~/.ssh/known_hosts
    python: str = "python3"  # the node's Python, for {python} and debug-agent's helper
    connect_timeout_s: float = Field(default=10.0, gt=0, le=MAX_SECONDS)


class SymptomSection(_Section):
    default: str | None = None


class ClusterSection(_Section):
    """Experiments in parallel on a Ray cluster (optional: `pip install 'debug-agent[ray]'`)."""

    ray: str | None = None  # "local" (started for the run), "auto" (this machine's), an address
    slots: int = Field(default=1, ge=1, le=64)  # experiments at once
    # what one experiment needs of a node, in Ray's resource names: {GPU = 8}, {CPU = 4}, ...
    resources: dict[str, float] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _slots_need_ray(self) -> ClusterSection:
        if self.slots > 1 and not self.ray:
            raise ValueError(
                'slots > 1 needs ray = "local", "auto" or a cluster address (experiments run '
                "as Ray tasks)"
            )
        if any(amount < 0 for amount in self.resources.values()):
            raise ValueError("resources are amounts of 0 or more")
        return self


class StackSection(_Section):
    """An upgrade of the whole stack: the good and bad package sets (tools/stack), each a
    `pip freeze` output, a requirements file with == pins, a uv.lock or a pylock.toml, paths
    from the config's folder; the bad side may be "current", what {python} has installed now.
    Every state is launched in an environment built of its set, {python} its interpreter."""

    good: str
    bad: str = "current"
    python: str | None = None  # the interpreter the environments are made with (default {python})
    wheels: str | None = None  # a folder of wheels, searched first (the only source offline)
    index_url: str | None = None  # default: uv's (PyPI, or UV_INDEX_URL)
    offline: bool = False  # no index at all: every wheel from `wheels` or uv's cache
    # package -> its project's git repository (a URL, or a path or bundle from the config's
    # folder): inside its first slow release, the commits between the two releases' tags
    repos: dict[str, str] = {}


class TargetConfig(_Section):
    target: TargetSection = Field(default_factory=TargetSection)
    launch: LaunchSection  # without [launch]: the bench command (see `bench_only`)
    baseline: BaselineSection = Field(default_factory=BaselineSection)
    build: BuildSection = Field(default_factory=BuildSection)
    bench: BenchSection = Field(default_factory=BenchSection)
    symptom: SymptomSection = Field(default_factory=SymptomSection)
    budget: BudgetSection = Field(default_factory=BudgetSection)
    judge: JudgeSection = Field(default_factory=JudgeSection)
    profile: ProfileSection = Field(default_factory=ProfileSection)
    llm: LLMSection = Field(default_factory=LLMSection)
    host: HostSection | None = None  # absent: the target is on this machine
    cluster: ClusterSection = Field(default_factory=ClusterSection)
    stack: StackSection | None = None  # absent: the environment is not under study
    _bench_only: bool = PrivateAttr(default=False)
    _config_dir: Path | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _launch_or_command_bench(
        cls, data: Any, handler: ModelWrapValidatorHandler[TargetConfig]
    ) -> TargetConfig:
        """No [launch], or one with only an env: the `command` bench is the launch (a library
        target); anything else without a launch command is one clear error."""
        launch = data.get("launch") if isinstance(data, dict) else None
        bench_only = isinstance(data, dict) and (
            launch is None or (isinstance(launch, dict) and set(launch) <= {"env"})
        )
        if bench_only:
            bench = data.get("bench")
            command = bench.get("command") if isinstance(bench, dict) else None
            if not (isinstance(bench, dict) and bench.get("kind") == "command" and command):
                raise ValueError(
                    'needs [launch] (a server command) or [bench] kind = "command" with a '
                    "command (a library target: the bench command is the launch)"
                )
            if isinstance(command, str) and any(p in command for p in SERVER_PLACEHOLDERS):
                raise ValueError(
                    "bench.command uses {port} or {base_url}, but there is no [launch] server"
                )
            data = {**data, "launch": {**(launch or {}), "command": command}}
        config = handler(data)
        config._bench_only = bench_only
        if not bench_only:  # a bench command as the launch holds a bench's placeholders
            command_words(config.launch.command, "launch.command", LAUNCH)
            command_words(config.baseline.command, "baseline.command", LAUNCH)
        if config.host is not None and config.stack is not None and config.stack.bad == "current":
            raise ValueError(
                '[stack] bad = "current" reads what this machine\'s Python has installed; with '
                "[host], name a freeze taken on the node (pip freeze > bad.txt there)"
            )
        if config.host is not None and config.cluster.ray:
            raise ValueError(
                "[host] and [cluster] do not go together: a Ray cluster's nodes hold the "
                "repository themselves (leave out [host])"
            )
        return config

    @property
    def bench_only(self) -> bool:
        """No server: each launch is the bench command alone, run in the scratch tree."""
        return self._bench_only

    @property
    def config_dir(self) -> Path | None:
        """The folder debug-agent.toml was read from (None for a config built in memory)."""
        return self._config_dir

    @property
    def python(self) -> str:
        """What {python} stands for: this Python, or the node's."""
        return self.host.python if self.host else sys.executable

    def launch_argv(
        self, port: int, command: str | None = None, python: str | None = None
    ) -> list[str]:
        """The launch command as argv, with {port} and {python} (default: `self.python`; a
        state of a [stack] has its own) filled in."""
        text = (command or self.launch.command).replace("{port}", str(port))
        python = python or self.python
        # a word that is {python} may hold spaces; inside a word (`bash -c '{python} -m x'`) it
        # is written as it is
        return [
            python if arg == "{python}" else arg.replace("{python}", python)
            for arg in shlex.split(text)
        ]


MAX_CONFIG_BYTES = 1 << 20


def load_config(path: Path) -> TargetConfig:
    if path.is_dir():
        path = path / CONFIG_NAME
    if path == Path(CONFIG_NAME) and not path.exists():  # the default, run in a subfolder
        path = at_repo_root(Path.cwd(), CONFIG_NAME) or path
    if not path.exists():
        if path.name == CONFIG_NAME and path.parent.is_dir():
            raise ConfigError(
                f"no {CONFIG_NAME} in {path.parent.resolve()} (write one with 'debug-agent init')"
            )
        raise ConfigError(f"no such config file or folder: {path}")
    if not path.is_file():  # a device or a pipe would be read forever
        raise ConfigError(f"{path} is not a regular file")
    if path.stat().st_size > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path} holds {path.stat().st_size:,} bytes: a config is a few lines")
    try:
        data = parse_toml(path.read_text(encoding="utf-8-sig"))  # a BOM (Notepad's) too
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text, which TOML is: save it as UTF-8") from None
    if where := nul_holder(data):
        raise ConfigError(f"{path}: {where} holds a NUL byte (\\u0000), which no process can take")
    try:
        config = TargetConfig.model_validate(data, strict=True)  # `requests = true` is not 1
    except ValidationError as e:
        raise ConfigError(f"{path}: {first_problem(e)}") from None
    config._config_dir = path.parent.resolve()
    learn_secrets(config)
    return config


def learn_secrets(config: TargetConfig) -> None:
    """The config's credentials, remembered so that nothing written or printed shows them."""
    secrets.learn_env(config.launch.env)
    secrets.learn_env(config.baseline.env or {})
    for command in (config.launch.command, config.baseline.command, config.bench.command):
        if command:
            secrets.learn_command(command)
