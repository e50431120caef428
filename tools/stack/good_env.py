"""`investigate --good-env FILE`: a known-good package set given on the command line."""

from __future__ import annotations

from pathlib import Path

from tools.config import ConfigError, StackSection, TargetConfig


def with_good_env(config: TargetConfig, good_env: Path | None) -> TargetConfig:
    """`config` with `good_env` (investigate --good-env: a freeze, requirements or lock file) as
    its good package set; without a [stack], the bad set is what {python} has installed now."""
    if good_env is None:
        return config
    if config.host is not None:
        raise ConfigError("--good-env with [host] is not supported yet: leave out [host]")
    stack = config.stack or StackSection(good=str(good_env))
    return config.model_copy(
        update={"stack": stack.model_copy(update={"good": str(good_env.absolute())})}
    )
