"""The LLM reasoner's settings, merged from the command's flags, the config's [llm] and the
OPENAI_* environment variables; and the reasoner they make."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from agent.llm.models import ChatModel, OpenAIModel, replay_model
from agent.llm.reasoner import LLMReasoner
from tools.config import LLMSection, TargetConfig
from tools.errors import ToolError


class LLMOptions(BaseModel):
    """The LLM reasoner's settings: flags, then [llm] in the config, then OPENAI_* env vars."""

    base_url: str | None = None
    model: str | None = None
    max_calls: int | None = None
    max_cost: float | None = None
    api_key: str | None = None
    replay: Path | None = None  # play back a saved session's model answers

    def merged(self, section: LLMSection) -> LLMOptions:
        """The settings in force; an endpoint that is no HTTP URL is one line naming where it
        was given (before, it was a model call failing after the first launches)."""
        given = (
            ("--llm-base-url", self.base_url),
            ("[llm] base_url", section.base_url),
            ("OPENAI_BASE_URL", os.environ.get("OPENAI_BASE_URL") or None),  # set empty: unset
        )
        where, base_url = next(((w, url) for w, url in given if url is not None), ("", None))
        if base_url is not None and (self.model or section.model):
            _check_endpoint(base_url, where)
        return LLMOptions(
            base_url=base_url,
            model=self.model or section.model,
            max_calls=self.max_calls or section.max_calls,
            max_cost=self.max_cost if self.max_cost is not None else section.max_cost,
            api_key=os.environ.get("OPENAI_API_KEY"),
            replay=self.replay,
        )

    @property
    def enabled(self) -> bool:
        return bool(self.model) or self.replay is not None

    def reasoner(self, config: TargetConfig, log: Callable[..., None]) -> LLMReasoner | None:
        if not self.enabled:
            return None
        model: ChatModel = (
            replay_model(self.replay)
            if self.replay is not None
            else OpenAIModel(
                self.base_url, self.model or "", self.api_key, timeout_s=config.llm.timeout_s
            )
        )
        return LLMReasoner(
            model,
            log,
            max_calls=self.max_calls or 20,
            max_cost=self.max_cost,
            price_per_mtok=(config.llm.usd_per_mtok_in, config.llm.usd_per_mtok_out),
        )


def _check_endpoint(url: str, where: str) -> None:
    """An http(s) URL with a host and a port a socket can have (the URL is not repeated: it may
    carry a password)."""
    import httpx

    try:
        parsed = httpx.URL(url)
        port_ok = parsed.port is None or 0 < parsed.port < 65536
        problem = None if parsed.scheme in ("http", "https") else "is not an http(s) URL"
        problem = problem or (None if parsed.host else "names no host")
        problem = problem or (None if port_ok else f"has port {parsed.port}, outside 1-65535")
    except httpx.InvalidURL as e:
        problem = f"is not a URL ({e})"
    if problem:
        raise ToolError(f"{where} {problem}: give the endpoint, e.g. http://127.0.0.1:8000/v1")
    from tools.server_http import environment_problem

    if (why := environment_problem()) is not None:
        raise ToolError(f"the model endpoint ({where}) cannot be reached from here: {why}")
