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


class LLMOptions(BaseModel):
    """The LLM reasoner's settings: flags, then [llm] in the config, then OPENAI_* env vars."""

    base_url: str | None = None
    model: str | None = None
    max_calls: int | None = None
    max_cost: float | None = None
    api_key: str | None = None
    replay: Path | None = None  # play back a saved session's model answers

    def merged(self, section: LLMSection) -> LLMOptions:
        return LLMOptions(
            base_url=self.base_url or section.base_url or os.environ.get("OPENAI_BASE_URL"),
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
            else OpenAIModel(self.base_url, self.model or "", self.api_key)
        )
        return LLMReasoner(
            model,
            log,
            max_calls=self.max_calls or 20,
            max_cost=self.max_cost,
            price_per_mtok=(config.llm.usd_per_mtok_in, config.llm.usd_per_mtok_out),
        )
