"""`debug-agent paths`: which files the server runs, on-path, off-path or unknown, read from
its startup log and its source by the reader of the server that wrote the log."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agent.cli.tools import JsonOpt, ServerOpt, check_log, load_target, server_name
from tools.errors import ToolError
from tools.json_text import model_json
from tools.log_file import read_log
from tools.visible import visible

if TYPE_CHECKING:
    from tools.code_paths.evidence import PathsReport
    from tools.config import TargetConfig
    from tools.gpu.info import GpuInfo
    from tools.server_facts import Server


def paths(
    files: Annotated[
        list[str] | None,
        typer.Argument(
            help="Files to judge (default: the changed files of ./debug-agent.toml's target)."
        ),
    ] = None,
    log: Annotated[Path | None, typer.Option(help="The server's startup log.")] = None,
    repo: Annotated[
        Path | None,
        typer.Option(
            help="The server's source: an SGLang or vLLM checkout or unpacked wheel "
            "(default: the target repo)."
        ),
    ] = None,
    arch: Annotated[
        str | None,
        typer.Option(
            help="The model architecture, if the log does not say (e.g. DeepseekV3ForCausalLM)."
        ),
    ] = None,
    gpu: Annotated[
        str | None,
        typer.Option(
            help="The server's GPU, if the log does not say: "
            "sm120, 9.0, gfx942, cuda, hip, npu, or 'local' "
            "(ask nvidia-smi / ROCm here)."
        ),
    ] = None,
    server: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Which files the server runs: on-path, off-path or unknown, with the evidence."""
    named = server_name(server)
    if repo is None or not files:
        target = load_target(Path("debug-agent.toml"))
        repo = repo or target.source_dir()
        files = files or sorted({c.file for c in target.cands.candidates if c.file})
        named = named or _launched_server(target.config)
    text = _log_text(log)
    device = _device(gpu, text, log)
    report = _classify(files, repo, arch, device, text, named)
    if as_json:
        typer.echo(model_json(report))
        return
    if report.gpu:
        typer.echo(f"GPU: {report.gpu.describe()} ({report.gpu.source})")
    for serving in report.servings:
        typer.echo(
            f"{serving.role}: {serving.architecture or 'architecture unknown'}, attention "
            f"{', '.join(serving.backends) or 'unknown'}"
        )
    for verdict in report.files:
        typer.echo(f"{verdict.status:>7}  {visible(verdict.path)}")  # a name's escapes shown
        for evidence in verdict.evidence:
            typer.echo(f"         - {visible(evidence)}")


def _classify(
    files: list[str],
    repo: Path,
    arch: str | None,
    device: GpuInfo | None,
    text: str,
    server: Server | None,
) -> PathsReport:
    """The path verdicts by the reader of the server the log (or --server) names."""
    from tools.server_facts import server_of

    if (server or server_of(text)) == "vllm":
        from tools.vllm.log import parse_vllm_log
        from tools.vllm.paths import classify_vllm
        from tools.vllm.selection import vllm_package
        from tools.vllm.startup import VllmStartup

        facts = parse_vllm_log(text).server
        startup = VllmStartup.model_validate(facts.details.get("startup", {}) if facts else {})
        return classify_vllm(files, vllm_package(repo), startup, arch, device, text)
    from tools.code_paths.evidence import classify, package_root
    from tools.server_log import args_line
    from tools.sglang.log import parse_log

    server_args = parse_log(text).server_args if text else None
    return classify(files, package_root(repo), server_args, args_line(text), arch, device, text)


def _launched_server(config: TargetConfig) -> Server | None:
    """The server the config's launch command starts (`vllm serve`, `sglang.launch_server`)."""
    import shlex

    from tools.server_facts import server_of_command

    if config.launch is None:
        return None
    try:
        return server_of_command(shlex.split(config.launch.command))
    except ValueError:
        return None


def _log_text(log: Path | None) -> str:
    """The startup log's text (empty without a log)."""
    if log is None:
        return ""
    check_log(log)
    return read_log(log)


def _device(gpu: str | None, text: str, log: Path | None) -> GpuInfo | None:
    """The GPU: asked here (`local`), given (`--gpu` wins over the log), or read from the log."""
    from tools.gpu.info import parse_gpu_option, query_here
    from tools.gpu.log import gpu_from_log

    if gpu == "local":
        device = query_here()
        if device is None:
            raise ToolError("--gpu local: neither nvidia-smi nor ROCm's tools answered here")
        return device
    if gpu:
        return parse_gpu_option(gpu)
    return gpu_from_log(text, f"log {log.name}") if log is not None else None
