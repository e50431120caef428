"""HTTP to the server debug-agent launched (on this machine, or through its tunnel to a node).

Never through a proxy: with HTTP_PROXY set, as on many company clusters, every request to
127.0.0.1 went to the proxy and the launch waited out its start-up time ("not ready"); with a
SOCKS ALL_PROXY, httpx asked for a package and the launch was an internal error. The
environment's proxies stay for what is elsewhere: the model endpoint, the package index.
"""

from __future__ import annotations

import httpx


def auth_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def server_client(
    timeout_s: float, api_key: str | None = None, limits: httpx.Limits | None = None
) -> httpx.Client:
    """A client for the launched server; plain HTTP, so no TLS context is built (tens of ms
    per client)."""
    return httpx.Client(
        timeout=timeout_s,
        verify=False,
        headers=auth_headers(api_key),
        limits=limits or httpx.Limits(),
        trust_env=False,
    )
