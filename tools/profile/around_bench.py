"""What a traced launch does around its bench: the sampler in every process counts afresh
when the bench begins (start-up is not what the bench measures), SGLang's torch profiler
records the bench where the server has one, and every process writes its reports before
the server stops."""

from __future__ import annotations

from dataclasses import dataclass, field

from tools.config import ProfileSection
from tools.node.nodes import Node
from tools.proc.import_trace import FLUSH, RESTART
from tools.proc.server import ServerInfo
from tools.profile.torch_profiler import start_torch_profile, stop_torch_profile


@dataclass
class AroundBench:
    node: Node
    profile: ProfileSection
    torch_refused: str | None = None  # why the server's torch profiler did not start
    _torch_on: bool = field(default=False, init=False)

    def _pids(self, server: ServerInfo) -> list[int]:
        return [p.pid for p in self.node.worker_env(server.pid).processes]

    def bench_begins(self, server: ServerInfo, api_key: str | None) -> None:
        if not self.profile.enabled:
            return
        self.node.wait_trace(self._pids(server), ask=RESTART)
        if self.profile.torch and self.torch_refused is None:
            folder, steps = self.node.torch_trace_dir(), self.profile.torch_steps
            refused = start_torch_profile(server.base_url, folder, steps, api_key)
            self._torch_on, self.torch_refused = refused is None, refused

    def bench_ended(self, server: ServerInfo, api_key: str | None) -> None:
        # the reports first: the sampler stops counting before the traces are written
        self.node.wait_trace(self._pids(server), ask=FLUSH)
        if self._torch_on:
            stop_torch_profile(server.base_url, api_key)  # a trace cut short is left out
            self._torch_on = False
