"""SGLang's own torch profiler, driven over HTTP around the bench: `/start_profile` with the
folder its traces go to, `/stop_profile` after (SGLang replies once every rank has written
its trace). A server without these routes (not SGLang, or one started without them) answers
otherwise: the reason comes back, once, and the launch goes on without GPU traces."""

from __future__ import annotations

import httpx

from tools.server_http import server_client

PROFILE_ID = "debug-agent"
TIMEOUT_S = 300.0  # writing the traces of a long bench takes a while


def _post(base_url: str, route: str, body: dict | None, api_key: str | None) -> str | None:
    """None when the server did it; else why not, in one line."""
    try:
        with (
            server_client(TIMEOUT_S, api_key) as client,
            client.stream("POST", base_url + route, json=body) as reply,
        ):
            status = reply.status_code  # its body is not needed (one without end hung here)
    except httpx.HTTPError as e:
        return f"{route}: {type(e).__name__}"
    return None if status == 200 else f"{route} answered {status}"


def _utf8(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:  # a lone surrogate: a name's byte that is not UTF-8
        return False
    return True


def start_torch_profile(
    base_url: str, output_dir: str, steps: int, api_key: str | None = None
) -> str | None:
    """Start the server's torch profiler (for `steps` forward steps; 0: until stopped)."""
    if not _utf8(output_dir):
        return "/start_profile: the trace folder's name is not UTF-8, which JSON cannot carry"
    body: dict = {"output_dir": output_dir, "profile_id": PROFILE_ID, "activities": ["CPU", "GPU"]}
    if steps:
        body["num_steps"] = steps
    return _post(base_url, "/start_profile", body, api_key)


def stop_torch_profile(base_url: str, api_key: str | None = None) -> str | None:
    return _post(base_url, "/stop_profile", None, api_key)
