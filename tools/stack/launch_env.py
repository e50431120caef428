"""A launch's environment, where a [stack] is under study: the state's package set built (or
found built) under the cache folder, with what was done written beside the launch's logs."""

from __future__ import annotations

from pathlib import Path

from tools.node.nodes import Node
from tools.repo.target import Target
from tools.stack.candidates import sources
from tools.stack.environment import BuiltEnvironment, requirement_lines


def state_environment(
    target: Target, pins: dict[str, str], out_dir: Path, node: Node
) -> BuiltEnvironment:
    """The environment of `pins` on the node ({python} for the launch); Unresolved when it
    cannot be."""
    stack = target.config.stack
    assert stack is not None
    base = stack.python or target.config.python
    record = out_dir / "environment.txt"
    record.write_text("\n".join(requirement_lines(pins)) + "\n")
    built = node.environment(pins, base, sources(stack, target.config_dir))
    how = "cached: built before" if built.cached else f"built in {built.seconds:.1f} s"
    with record.open("a") as out:
        out.write(f"# {built.folder} ({how})\n")
    return built
