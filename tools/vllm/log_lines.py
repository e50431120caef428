"""One vLLM log line taken apart: the process that wrote it, its level, time and message.

vLLM's format (vllm/logger.py): `LEVEL MM-DD HH:MM:SS [file.py:line] message`; 0.7 and early 0.8
print `file.py:line]` without the opening bracket. Child processes put their name in front:
0.8's `(VllmWorker rank=N pid=P)` and `(EngineCore_N pid=P)`, 0.10+'s `(APIServer pid=P)`,
`(EngineCore_DP0 pid=P)`, `(Worker_TP0 pid=P)`. The `[file:line]` moves between releases, so
nothing here keys on it. Transports (docker, kubectl, Ray) are peeled off first by
tools.sglang.log_lines, which also takes `(Name pid=P)` for a Ray actor's prefix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tools.sglang.log_lines import LogLine

# `(VllmWorker rank=1 pid=7)`, `(VllmWorker TP3 pid=7)`, `(Worker_DP0_TP3_EP3 pid=7)`,
# `(RayWorkerWrapper pid=7, ip=10.0.0.2)`, `(pid=7)`; Ray's colours, their ESC byte lost in a
# paste, around it (`[36m(RayWorkerWrapper pid=860)[0m`); nested for a worker of an engine.
_NAME = r"[A-Za-z][\w:.-]{0,80}(?: (?:rank=)?\w{1,20})?"
_PROCESS = re.compile(
    rf"(?:\x1b?\[\d{{1,3}}m)?\((?:(?P<name>{_NAME}) )?pid=\d+(?:, ip=[^)]*)?\)(?:\x1b?\[0m)? ?"
)
_SOURCE = re.compile(rf"(?P<name>{_NAME}) pid=\d+(?:, ip=.*)?")
_HEAD = re.compile(
    r"(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) +"
    r"(?P<time>\d\d-\d\d \d\d:\d\d:\d\d)(?:\.\d+)? +\[?[\w./-]{1,200}:\d+\] ?"
)


@dataclass(frozen=True, slots=True)
class VllmLine:
    number: int
    process: str  # "APIServer", "VllmWorker rank=1", "Worker_TP0"; "" for the main process
    level: str | None
    time: str | None
    message: str


def vllm_line(line: LogLine) -> VllmLine:
    """The line's parts; a line in no known format is all message."""
    body, process = line.body, ""
    found = _SOURCE.fullmatch(line.source.rsplit("|", 1)[-1]) if line.source else None
    if found:
        process = found.group("name")
    for _ in range(3):  # a worker's prefix behind its engine's
        at = _PROCESS.match(body)
        if at is None:
            break
        process, body = at.group("name") or process, body[at.end() :]
    head = _HEAD.match(body)
    if head is None:
        return VllmLine(line.number, process, None, None, body)
    return VllmLine(
        line.number, process, head.group("level"), head.group("time"), body[head.end() :]
    )
