"""Candidates from the config: env vars and server args where the bad launch ([launch])
differs from the good baseline ([baseline])."""

from __future__ import annotations

import shlex

from tools.config import TargetConfig
from tools.repo.candidates import Candidate


def _arg_pairs(command: str) -> dict[str, str | None]:
    """--flag value / --flag=value / --switch, by flag (the last one wins, as argparse does)."""
    argv = shlex.split(command)
    pairs: dict[str, str | None] = {}
    for i, arg in enumerate(argv):
        if not arg.startswith("--"):
            continue
        if "=" in arg:
            flag, value = arg.split("=", 1)
            pairs[flag] = value
        else:
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            pairs[arg] = nxt if nxt is not None and not nxt.startswith("--") else None
    return pairs


def config_candidates(config: TargetConfig) -> list[Candidate]:
    """Env vars and server args where the bad launch differs from the good baseline."""
    found = []
    good_env = config.baseline.env if config.baseline.env is not None else config.launch.env
    for name in sorted(set(good_env) | set(config.launch.env)):
        good, bad = good_env.get(name), config.launch.env.get(name)
        if good != bad:
            found.append(
                Candidate(
                    id=f"env-{name}",
                    kind="env",
                    name=name,
                    good=good,
                    bad=bad,
                    origin="[launch] env vs [baseline] env",
                )
            )
    if config.baseline.command:
        good_args = _arg_pairs(config.baseline.command)
        bad_args = _arg_pairs(config.launch.command)
        for flag in sorted(set(good_args) | set(bad_args)):
            if flag == "--port":
                continue
            in_good, in_bad = flag in good_args, flag in bad_args
            good, bad = good_args.get(flag), bad_args.get(flag)
            if in_good != in_bad or good != bad:
                found.append(
                    Candidate(
                        id=f"arg-{flag.lstrip('-')}",
                        kind="arg",
                        name=flag,
                        good=(good or "") if in_good else None,
                        bad=(bad or "") if in_bad else None,
                        origin="[launch] command vs [baseline] command",
                    )
                )
    return found
