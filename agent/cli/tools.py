"""The tools as commands, one hygienic step at a time: diff, experiment, env, logs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from tools.errors import ToolError
from tools.json_text import model_json
from tools.limits import MAX_COUNT

if TYPE_CHECKING:
    from tools.config import TargetConfig
    from tools.repo.target import Target
    from tools.server_facts import Server

ConfigOpt = Annotated[
    Path, typer.Option("--config", help="The target config (default: ./debug-agent.toml).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
RevertOpt = Annotated[
    list[str],
    typer.Option(
        help="Candidate ids to undo (comma-separated or repeated); starts from the bad state."
    ),
]
ApplyOpt = Annotated[list[str], typer.Option(help="Candidate ids to add to the good state.")]


def load_target(config_path: Path) -> Target:
    from tools.config import load_config
    from tools.repo.target import Target

    config = load_config(config_path)
    target = Target.load(config, config.config_dir or config_path.resolve().parent)
    if not target.cands.candidates:
        raise ToolError(
            f"no difference between the working tree and the good ref "
            f"{config.target.good!r}, and no env or arg difference: nothing to test"
        )
    return target


def run_folder(out: Path | None, target: Target, kind: str) -> Path:
    """Where a command's launch writes its logs: `--out` (a folder, made if missing), else a new
    folder beside the sessions."""
    from tools.folders import new_run_dir, sessions_root

    if out is None:
        return new_run_dir(sessions_root(Path.cwd(), Path(target.cands.repo)), kind)
    if out.exists() and not out.is_dir():
        raise ToolError(f"--out {out}: not a folder (a file is there)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ToolError(f"--out {out}: cannot make the folder ({e.strerror or e})") from None
    return out


def _checked_arg(arg: str, port: str | None) -> str:
    """An --arg value that splits into words (it is appended to the launch command) and leaves
    the launch's `{port}` option alone: the server would listen where no one waits for it."""
    import shlex

    try:
        words = shlex.split(arg)
    except ValueError as e:
        raise ToolError(f"--arg {arg!r} cannot be split into words: {e}") from None
    if port and any(word == port or word.startswith(f"{port}=") for word in words):
        raise ToolError(
            f"--arg {arg!r} sets {port}, which debug-agent fills ({{port}}: a free port for "
            "each launch, the one it waits on)"
        )
    return arg


def split_ids(values: list[str]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _parse_env(pairs: list[str]) -> dict[str, str]:
    from tools.config_values import env_pair

    env = {}
    for pair in pairs:
        try:
            name, value = env_pair(pair)
        except ValueError as e:
            raise ToolError(f"--env {pair.partition('=')[0]!r}: {e}") from None
        env[name] = value
    return env


def diff(config: ConfigOpt = Path("debug-agent.toml"), as_json: JsonOpt = False) -> None:
    """List the candidates (hunks, env and server-arg differences) with their stable ids."""
    from tools.secrets import mask

    cands = mask(load_target(config).cands)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "good": cands.good,
                    "good_sha": cands.good_sha,
                    "candidates": [c.summary() for c in cands.candidates],
                },
                indent=2,
            )
        )
        return
    from agent.views import candidates_table

    candidates_table(cands)


def experiment(
    revert: RevertOpt = [],  # noqa: B006
    apply: ApplyOpt = [],  # noqa: B006
    env: Annotated[list[str], typer.Option(help="Extra env for the server, NAME=VALUE.")] = [],  # noqa: B006
    arg: Annotated[
        list[str], typer.Option(help='Extra server args, e.g. "--attention-backend flashinfer".')
    ] = [],  # noqa: B006
    samples: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=MAX_COUNT,
            help="Benchmark requests per launch (default: the config's bench.requests).",
        ),
    ] = None,
    launches: Annotated[int, typer.Option(min=1, max=MAX_COUNT, help="Launches (replicates).")] = 1,
    metric: Annotated[
        str | None,
        typer.Option(
            help="verify_ms | tok_s | tpot_ms | ttft_ms | latency_ms | accept_len (default: from "
            "the symptom)."
        ),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Folder for logs and the applied patch.")] = None,
    config: ConfigOpt = Path("debug-agent.toml"),
    as_json: JsonOpt = False,
) -> None:
    """One controlled experiment in a scratch worktree: launch, benchmark, stop."""
    from agent.views import experiment_progress, experiment_summary
    from tools.experiment import ExperimentOptions, ExperimentSpec, run_experiment
    from tools.measure import port_flag
    from tools.secrets import mask

    target = load_target(config)
    spec = ExperimentSpec(
        reverted=split_ids(revert),
        applied=split_ids(apply),
        env=_parse_env(env),
        args=[_checked_arg(a, port_flag(target.config.launch.command)) for a in arg],
    )
    target.cands.by_id(spec.reverted + spec.applied)  # unknown ids fail before anything launches
    name = checked_metric(metric, target.config) or default_metric(target.config)
    run_dir = run_folder(out, target, "experiment")
    requests = samples or target.config.bench.requests
    with experiment_progress(enabled=not as_json, requests=requests, launches=launches) as bar:
        options = ExperimentOptions(metric=name, requests=samples, launches=launches, progress=bar)
        result = run_experiment(target, spec, run_dir, options)
    result = mask(result)
    if as_json:
        typer.echo(model_json(result))
    else:
        experiment_summary(result)


def checked_metric(metric: str | None, config: TargetConfig) -> str | None:
    """--metric, one the serving bench can measure (a command bench's are its own): a name it
    never measures was an error after a whole launch."""
    from tools.bench.serving import SERVING_METRICS

    if metric is not None and config.bench.kind != "command" and metric not in SERVING_METRICS:
        raise ToolError(f"--metric {metric!r}: the bench measures {' | '.join(SERVING_METRICS)}")
    return metric


def default_metric(config: TargetConfig) -> str | None:
    if config.bench.kind == "command":
        return config.bench.metric
    if config.symptom.default:
        from agent.symptom import parse_symptom

        return parse_symptom(config.symptom.default).metric
    return None


def env(
    pid: Annotated[int, typer.Argument(min=1, help="The server's main process.")],
    var: Annotated[list[str], typer.Option(help="Only these variables.")] = [],  # noqa: B006
    as_json: JsonOpt = False,
) -> None:
    """The NCCL_*/SGLANG_*/CUDA_*/PYTHON* variables (and those named by --var) each process of a
    server was started with."""
    from tools.proc.worker_env import worker_env

    report = worker_env(pid, frozenset(var))
    if var:
        for proc in report.processes:
            proc.env = {k: v for k, v in proc.env.items() if k in var}
    if as_json:
        typer.echo(model_json(report))
        return
    from agent.views import worker_env_table

    worker_env_table(report, var)


logs_app = typer.Typer(help="Server logs.", no_args_is_help=True, rich_markup_mode=None)


ServerOpt = Annotated[
    str | None,
    typer.Option(help="The server that wrote the log: sglang or vllm (default: told by the log)."),
]


def server_name(server: str | None) -> Server | None:
    """`--server`, checked: a clear error for a name neither reader knows."""
    from tools.server_facts import SERVERS

    if server is None:
        return None
    if server.lower() not in SERVERS:
        raise ToolError(f"--server {server!r}: use one of {', '.join(SERVERS)}")
    return cast("Server", server.lower())


@logs_app.command("parse")
def logs_parse(
    file: Annotated[Path, typer.Argument(help="An SGLang or vLLM server log (or bench output).")],
    server: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Read a server log: which server, startup args, throughput lines, bench results, errors."""
    from tools.secrets import mask
    from tools.server_log import parse_server_log_file

    check_log(file)
    # streamed: memory grows with the records, not the file
    result = parse_server_log_file(file, server_name(server))
    if as_json:  # written record by record, each masked
        result.write_json(sys.stdout, transform=mask)
        sys.stdout.write("\n")
        return
    from agent.views import log_summary

    log_summary(file, mask(result.to_json_dict()))


def check_log(log: Path) -> None:
    """A log to read is a regular file (a pipe or a device would be read forever)."""
    if not log.exists():
        raise ToolError(f"no such log file: {log}")
    if not log.is_file():
        raise ToolError(f"{log} is not a regular file: give the server's log file")


def init(
    model: Annotated[
        str | None, typer.Option(help="The model path for an SGLang or vLLM launch.")
    ] = None,
    server: Annotated[
        str | None,
        typer.Option(help="The server to launch: sglang or vllm (default: told by the checkout)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing config.")] = False,
) -> None:
    """Write a commented debug-agent.toml for the git repository here."""
    from tools.init_config import edit_hint, write_config

    path = write_config(Path.cwd(), model, force, server_name(server))
    typer.echo(f"wrote {path}; edit it ({edit_hint(path)}), then run 'debug-agent check'")


def check(config: ConfigOpt = Path("debug-agent.toml")) -> None:
    """Validate a config without launching anything: keys, repo, good ref, commands."""
    from agent.llm.options import LLMOptions
    from agent.symptom import configured_symptom
    from tools.config import load_config
    from tools.init_config import check_config

    report = check_config(config)
    target = load_config(config)
    configured_symptom(target)  # what `investigate` without --symptom reads
    LLMOptions().merged(target.llm)  # the model's endpoint, where one is set
    typer.echo(
        f"ok: {report.config}: repo {report.repo}, good {report.good} "
        f"({report.good_sha[:10]}), launch {report.launch[0] if report.launch else '?'}"
    )


def register_tool_commands(app: typer.Typer) -> None:
    app.command()(init)
    app.command()(check)
    from agent.cli.paths import paths

    app.command()(paths)
    app.command()(diff)
    app.command()(experiment)
    from agent.cli.profile import profile

    app.command()(profile)
    app.command()(env)
    app.add_typer(logs_app, name="logs")
