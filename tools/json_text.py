"""JSON from outside (a transcript, a bench's output, a model's stream, a trace): parsed with
`json.loads`, where a document nested deeper than the parser can follow is a ValueError like
any other malformed one (json raises RecursionError there, which no `except ValueError` caught:
a line of 100,000 `[` made `replay` an internal error)."""

from __future__ import annotations

import json
from typing import Any


def parse_json(text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply to read") from None
