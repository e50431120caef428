"""HTTP to the server debug-agent launched (on this machine, or through its tunnel to a node),
and whether a client to elsewhere can be made from this environment at all.

Never through a proxy: with HTTP_PROXY set, as on many company clusters, every request to
127.0.0.1 went to the proxy and the launch waited out its start-up time ("not ready"); with a
SOCKS ALL_PROXY, httpx asked for a package and the launch was an internal error. The
environment's proxies stay for what is elsewhere: the model endpoint, the package index.
"""

from __future__ import annotations

import time
from typing import Any

import httpx

from tools.json_text import parse_json

JSON_LIMIT = 1 << 20  # bytes of a reply read as JSON: /model_info is a few kB


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


def get_json(client: httpx.Client, url: str, seconds: float = 5.0) -> Any | None:
    """The JSON of GET `url`; None where it answers otherwise, is not JSON, or takes longer
    than `seconds` or more than JSON_LIMIT bytes (a body without end hung the launch: httpx's
    timeout is per read)."""
    with client.stream("GET", url) as reply:
        body = read_body(reply, JSON_LIMIT, seconds) if reply.status_code == 200 else None
    try:
        return None if body is None else parse_json(body)
    except ValueError:
        return None


def read_body(reply: httpx.Response, limit: int, seconds: float) -> bytes | None:
    """A streamed reply's body; None past `limit` bytes or `seconds` (httpx's timeout is per
    read: a body without end is never late)."""
    deadline = time.monotonic() + seconds
    body = bytearray()
    for chunk in reply.iter_bytes():
        body += chunk
        if len(body) > limit or time.monotonic() > deadline:
            return None
    return bytes(body)


def environment_problem() -> str | None:
    """Why no HTTP client to elsewhere (the model endpoint, a package index) can be made from
    this environment: a SOCKS proxy without httpx's SOCKS support, or certificates that
    SSL_CERT_FILE / SSL_CERT_DIR name and that cannot be read. None where one can."""
    try:
        httpx.Client().close()
    except ImportError as e:
        return (
            f"the environment's proxy needs a package ({e}): pip install 'httpx[socks]', or "
            "unset that proxy variable"
        )
    except OSError as e:
        return (
            "the certificates that SSL_CERT_FILE or SSL_CERT_DIR name cannot be read "
            f"({e.strerror or e}): fix or unset it"
        )
    return None
