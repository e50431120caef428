"""The session transcript: JSON lines, one event each, written and flushed as it happens.

Line 1 is a header {"kind": "header", "schema": ...}; every other line is an event with
`seq` (consecutive from 1), `ts`, `node`, `kind` (thought, tool_call, tool_result, hypothesis,
experiment, verdict, user, error) and `payload`. Plain json reads it; `text` is the sentence a
reviewer reads. Secrets are masked before anything is written. agent.events types the lines;
`read_transcript` parses them into those models.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from agent.events import EVENT, Event, EventKind, TranscriptHeader
from tools.digits import is_digits
from tools.errors import ToolError
from tools.json_text import parse_json
from tools.own_files import append_text
from tools.secrets import mask, remember

SCHEMA = "debug-agent.transcript/1"


class Transcript:
    def __init__(
        self,
        path: Path,
        echo: Callable[[str, str, str], None] | None = None,
        secrets: list[str] | None = None,
    ) -> None:
        self.path = path
        remember(secrets or [])  # exact values to mask, besides what the config holds
        self.echo = echo  # (node, kind, text): shows the reasoning as it happens
        self.seq = self._last_seq()

    def _last_seq(self) -> int:
        """The last event's number, read from the end (a resumed transcript may be large);
        a torn last line is passed over."""
        if not self.path.exists():
            return 0
        with self.path.open("rb") as f:
            size = f.seek(0, 2)
            for window in (1 << 20, size):  # the tail; the whole file only where one line is longer
                f.seek(max(0, size - window))
                for line in reversed(f.read().splitlines()):
                    try:
                        return int(parse_json(line.decode(errors="replace")).get("seq", 0))
                    except (ValueError, AttributeError, TypeError):
                        continue
        return 0

    def header(self, payload: dict) -> None:
        if self.path.exists() and self.path.stat().st_size:
            return
        self._write({"kind": "header", "schema": SCHEMA, "ts": time.time(), **mask(payload)})

    def event(
        self, node: str, kind: EventKind, text: str, *, quiet: bool = False, **payload: Any
    ) -> None:
        """One event; `quiet` keeps it off the terminal (a summary line stands for many)."""
        text = mask(text)
        record = {
            "seq": self.seq + 1,
            "ts": round(time.time(), 3),
            "node": node,
            "kind": kind,
            "text": text,
            "payload": mask(payload),
        }
        EVENT.validate_python(record)  # a kind the readers know (a ValidationError if not)
        self._write(record)
        self.seq += 1
        if self.echo and not quiet:
            self.echo(node, kind, text)

    def _write(self, record: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(record, default=str)
        append_text(self.path, line + "\n")


class TranscriptError(ToolError):
    pass


class Loaded(BaseModel):
    header: TranscriptHeader
    events: list[Event]
    torn: bool  # the last line was cut (a writer killed mid-line): it is skipped


def _records(path: Path) -> tuple[list[dict], bool]:
    """The JSON lines, and whether the last one was cut (then skipped)."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError as e:  # a folder in its place, no permission: the session is unreadable
        raise TranscriptError(f"cannot read {path}: {e.strerror or e}") from None
    records, torn = [], False
    for number, line in enumerate(lines, 1):
        try:
            records.append(parse_json(line))
        except ValueError:
            if number == len(lines):
                torn = True
                continue
            raise TranscriptError(f"{path}:{number} is not a JSON line") from None
    return records, torn


def read_header(path: Path, most: int = 1 << 20) -> TranscriptHeader:
    """Line 1 alone: listing the sessions needs no more, and a transcript can be hundreds of MB
    (reading them whole took 19 s and 2 GB to list one of 200 MB)."""
    try:
        with path.open("rb") as lines:
            first = lines.readline(most).decode(errors="replace")
    except OSError as e:
        raise TranscriptError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        record = parse_json(first)
    except ValueError:
        raise TranscriptError(f"{path} has no header line") from None
    _check_schema(path, [record])
    try:
        return TranscriptHeader.model_validate(record)
    except ValidationError as e:
        raise TranscriptError(f"{path}:1 is not a header line: {e.errors()[0]['msg']}") from None


def _check_schema(path: Path, records: list[dict]) -> None:
    if not records or not isinstance(records[0], dict) or records[0].get("kind") != "header":
        raise TranscriptError(f"{path} has no header line")
    schema = str(records[0].get("schema", ""))
    name, _, version = schema.partition("/")
    if name != SCHEMA.partition("/")[0] or not is_digits(version):
        raise TranscriptError(f"{path}: unknown transcript schema {schema!r}")
    if int(version) > int(SCHEMA.partition("/")[2]):
        raise TranscriptError(
            f"{path} uses transcript schema {schema}, newer than this "
            f"debug-agent reads ({SCHEMA}): upgrade debug-agent"
        )


def read_transcript(path: Path) -> Loaded:
    """A transcript, tolerating a torn last line; a newer schema is a clear error."""
    if not path.exists():
        raise TranscriptError(f"no transcript at {path}")
    records, torn = _records(path)
    _check_schema(path, records)
    try:
        return Loaded.model_validate({"header": records[0], "events": records[1:], "torn": torn})
    except ValidationError as e:
        where = e.errors()[0]["loc"]
        at = where[1] if where[0] == "events" and len(where) > 1 else None  # the event's index
        line = f"{path}:{at + 2}" if isinstance(at, int) else str(path)
        raise TranscriptError(
            f"{line} is not a transcript line this debug-agent reads: {e.errors()[0]['msg']}"
        ) from None
