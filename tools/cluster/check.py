"""What stops a `[cluster]` from running experiments, found before any launch: `debug-agent
check` and the start of an investigation say it in one line."""

from __future__ import annotations

from tools.config import ClusterSection
from tools.digits import is_digits


def cluster_problems(section: ClusterSection) -> list[str]:
    """What stops the cluster from running experiments, found in seconds, before any launch:
    Ray missing, or an address that does not answer (Ray itself retries for minutes)."""
    import importlib.util
    import socket

    if not section.ray:
        return []
    if importlib.util.find_spec("ray") is None:
        return ["[cluster] needs Ray: pip install 'debug-agent[ray]'"]
    if section.ray in ("local", "auto"):
        return []
    host, _, port = section.ray.removeprefix("ray://").rpartition(":")
    if not host or not is_digits(port):
        return [
            f'[cluster] ray = {section.ray!r}: give "local", "auto" or HOST:PORT '
            "(ray://HOST:PORT for Ray Client)"
        ]
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as e:
        why = e.strerror or type(e).__name__
        return [f"[cluster] ray = {section.ray!r}: cannot reach {host}:{port} ({why})"]
    return []


def no_node_fits(nodes: list[dict], wanted: dict[str, float]) -> str | None:
    """Why no live node of the cluster can run one experiment with `wanted` (Ray's resource
    names): Ray would hold its tasks as infeasible for ever. None where one can."""
    wanted = {name: amount for name, amount in wanted.items() if amount > 0}
    alive = [node.get("Resources", {}) for node in nodes if node.get("Alive")]
    if any(all(have.get(k, 0) >= v for k, v in wanted.items()) for have in alive):
        return None
    asked = ", ".join(f"{k} = {v:g}" for k, v in sorted(wanted.items()))
    offered = "; ".join(
        ", ".join(f"{k} {have.get(k, 0):g}" for k in sorted(wanted)) for have in alive
    )
    return (
        f"[cluster] resources {{{asked}}}: no node of the cluster has them (its nodes: "
        f"{offered or 'none alive'}), so no experiment would ever start"
    )
