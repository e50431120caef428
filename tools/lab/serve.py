"""`debug-agent lab serve DIR`: the lab's SGLang command line, in the foreground."""

from __future__ import annotations

import os
from pathlib import Path

from tools.argv import drop_options
from tools.config import load_config
from tools.proc.groups import run_until_signal, start_group


def without_speculative(argv: list[str]) -> list[str]:
    """Drop every --speculative-* option (and its value) from a command line."""
    return drop_options(argv, lambda name: name.startswith("--speculative"))


def lab_command(lab_dir: Path, port: int, no_spec: bool = False) -> tuple[list[str], dict]:
    config = load_config(lab_dir)
    argv = config.launch_argv(port)
    if no_spec:
        argv = without_speculative(argv)
    return argv, {**os.environ, **config.launch.env}


def serve_lab(lab_dir: Path, port: int, no_spec: bool = False) -> int:
    argv, env = lab_command(lab_dir, port, no_spec)
    proc = start_group(argv, lab_dir, env)
    return run_until_signal(proc)
