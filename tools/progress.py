"""What a measurement tells whoever watches it: the phase of each launch, the requests done."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


class Progress(Protocol):
    def phase(self, name: str) -> None:
        """A launch enters a phase: "loading" (the server starts) or "benchmark"."""

    def request(self, done: int, total: int) -> None:
        """`done` of the benchmark's `total` HTTP requests have finished."""


@dataclass(frozen=True)
class ProgressCallbacks:
    """A Progress made of two callbacks, either of which may be missing."""

    on_phase: Callable[[str], None] | None = None
    on_request: Callable[[int, int], None] | None = None

    def phase(self, name: str) -> None:
        if self.on_phase is not None:
            self.on_phase(name)

    def request(self, done: int, total: int) -> None:
        if self.on_request is not None:
            self.on_request(done, total)
