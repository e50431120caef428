"""The build step: what a scratch tree needs before it can launch (compile an extension,
generate code, `pip install -e . --no-deps` into a venv of its own), from `[build]`.

It runs in the tree, on the experiment's node, with the configuration's env (an env candidate
such as CFLAGS reaches it) plus `[build] env`, before the launches and inside their import
trace and file-open watch: a code generator the build imports, or a data file it compiles in,
is on the path. Its output is kept as build.log beside the launch's logs. A
build that fails or times out is the configuration's failure: unresolved ("its tree did not
build"), never a measurement, and never retried (a build fails the same way twice).
"""

from __future__ import annotations

from pathlib import Path, PurePath

from tools.config import TargetConfig
from tools.errors import BuildError
from tools.measure import tree_placeholders
from tools.node.nodes import Node

TAIL = 3  # lines of the build's output quoted in the error


def build(
    config: TargetConfig, node: Node, cwd: PurePath, env: dict[str, str], log_path: Path
) -> None:
    """Run `[build] command` in `cwd`; BuildError, with the output's last lines, if it fails."""
    command = config.build.command
    if not command:
        return
    code, output = node.shell(
        tree_placeholders(config, node, cwd).fill(command),
        cwd,
        {**env, **config.build.env},
        config.build.timeout_s,
    )
    log_path.write_text(output)
    if code == 0:
        return
    how = f"timed out after {config.build.timeout_s:g} s" if code is None else f"exited {code}"
    last = " | ".join(line.strip() for line in output.splitlines()[-TAIL:] if line.strip())
    raise BuildError(f"the build step `{command}` {how} (log: {log_path}): {last or 'no output'}")
