"""Log lines that a container runtime wrapped: docker's json-file driver and the CRI format.

- docker json-file (`/var/lib/docker/containers/<id>/<id>-json.log`, fluentd/k8s copies alike):
  `{"log":"[2026-01-01 12:00:00 TP0] Decode batch, ...\\n","stream":"stderr","time":"..."}`.
  The message is a JSON string (ANSI colours arrive as `\\u001b[...m`); docker cuts a line longer
  than 16 KB into several records, and only the last one ends with `\\n`.
- CRI (containerd / CRI-O, `/var/log/pods/...`): `2026-01-01T12:00:00.123456789Z stderr F msg`,
  where `P` instead of `F` marks a partial line continued by the next record.

A wrapped line gives (message, time, whole): whole is False for a record that the next one
continues. A docker line cut short (the file ends mid-record) still gives what its message holds.
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from tools.json_text import parse_json


class Wrapped(NamedTuple):
    message: str  # without the newline that ended it
    time: str | None
    whole: bool  # False: the next record continues this line


_DOCKER_START = re.compile(r'\s*\{\s*"log"\s*:\s*"')
_CRI = re.compile(
    r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)) (?:stdout|stderr) ([FP]) ?"
)
# The longest prefix of a cut JSON string body that is whole: no dangling `\` or `\u12`.
_STRING_BODY = re.compile(r'(?:[^"\\]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*')
_TIME_FIELD = re.compile(r'"time"\s*:\s*"([^"\\]{1,64})"')


def _docker(line: str) -> Wrapped | None:
    try:
        record = parse_json(line)
    except ValueError:
        return _docker_cut(line)
    if not isinstance(record, dict) or not isinstance(record.get("log"), str):
        return None
    log: str = record["log"]
    time = record.get("time")
    whole = log.endswith("\n")
    return Wrapped(log[:-1] if whole else log, time if isinstance(time, str) else None, whole)


def _docker_cut(line: str) -> Wrapped | None:
    """What a docker record cut mid-way holds: its message up to the cut (time, if it came
    first). The message counts as a whole line: a cut value in it is read as cut."""
    start = _DOCKER_START.match(line)
    if start is None:
        return None
    body = _STRING_BODY.match(line, start.end())
    assert body is not None  # the pattern matches the empty string
    try:
        message = json.loads('"' + body.group(0) + '"')
    except ValueError:
        return None
    if message.endswith("\n"):
        message = message[:-1]
    time = _TIME_FIELD.search(line, body.end())
    return Wrapped(message, time.group(1) if time else None, True)


def unwrap(line: str) -> Wrapped | None:
    """The message of a docker json-file or CRI line; None for any other line."""
    head = line[:24]
    if "{" in head and '"log"' in line[:160]:  # docker writes "log" first; others may not
        return _docker(line)
    if len(head) > 20 and head[4] == "-" and head[10] == "T":
        m = _CRI.match(line)
        if m:
            return Wrapped(line[m.end() :], m.group(1), m.group(2) == "F")
    return None
