"""A [stack]'s environments on a node over SSH: built there, by the node's Python, under the
node's own cache (tools/node/node_build.py), the wheel folder sent first where the config names
one (a file already there is not sent again)."""

from __future__ import annotations

import hashlib
import json
import posixpath
import shlex
from collections.abc import Callable
from pathlib import Path, PurePath, PurePosixPath

from tools.node.ssh_host import REMOTE_CACHE, SSHHost
from tools.stack.environment import BuiltEnvironment, Sources, Unresolved, requirement_lines

Shell = Callable[[str, PurePath, dict[str, str], float], tuple[int | None, str]]


def build_on_node(
    host: SSHHost,
    shell: Shell,
    pins: dict[str, str],
    base_python: str,
    sources: Sources,
    timeout_s: float = 1800,
) -> tuple[BuiltEnvironment, dict[str, list[str]]]:
    """The environment of `pins` on the node, and each distribution's files there."""
    cache = f"{host.home()}/{REMOTE_CACHE}"
    spec: dict = {
        "lines": requirement_lines(pins),
        "root": f"{cache}/envs",
        "index_url": sources.index_url,
        "offline": sources.offline,
        "timeout_s": timeout_s,
    }
    if sources.wheels:  # one folder on the node per set of wheels (names and sizes)
        folder = Path(sources.wheels)
        if not folder.is_dir():
            raise Unresolved(f"the wheel folder {folder} is not a folder here")
        listing = sorted((p.name, p.stat().st_size) for p in folder.iterdir() if p.is_file())
        tag = hashlib.sha256(json.dumps(listing).encode()).hexdigest()[:12]
        spec["wheels"] = f"{cache}/wheels/{tag}"
        host.upload(folder, spec["wheels"], keep_same_size=True)
    script = posixpath.join(posixpath.dirname(host.helper()), "node_build.py")
    command = " ".join(shlex.quote(a) for a in (base_python, script, json.dumps(spec)))
    code, output = shell(command, PurePosixPath("/"), {}, timeout_s + 60)
    try:
        reply = json.loads(output.strip().splitlines()[-1])
    except (ValueError, IndexError):
        tail = " ".join(output.split())[-300:] or f"exit status {code}"
        raise Unresolved(f"the node could not build the environment: {tail}") from None
    if "unresolved" in reply:
        raise Unresolved(f"on the node: {reply['unresolved']}")
    built = BuiltEnvironment(
        folder=reply["folder"],
        python=reply["python"],
        cached=reply["cached"],
        seconds=reply["seconds"],
    )
    return built, reply.get("files") or {}
