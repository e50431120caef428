"""JSON from outside (a transcript, a bench's output, a model's stream, a trace): parsed with
`json.loads`, where a document nested deeper than the parser can follow is a ValueError like
any other malformed one (json raises RecursionError there, which no `except ValueError` caught:
a line of 100,000 `[` made `replay` an internal error)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # pydantic is imported where it is used: the CLI's start-up reads this file
    from pydantic import BaseModel, TypeAdapter

T = TypeVar("T")


def parse_json(text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply to read") from None


def validate_json(schema: type[T] | TypeAdapter[T], text: str | bytes) -> T:
    """`text` read as `schema`, parsed by `json.loads`: a str holding a file name that is not
    UTF-8 (a lone surrogate, os.fsdecode's) is written as `\\udcff`, which pydantic's own parser
    refuses (a lab in such a folder made its state.json unreadable). Malformed JSON is
    pydantic's ValidationError, as from its `validate_json`."""
    from pydantic import TypeAdapter

    adapter = schema if isinstance(schema, TypeAdapter) else TypeAdapter(schema)
    try:
        data = parse_json(text)
    except ValueError:
        return adapter.validate_json(text)  # pydantic's parser says what is wrong
    return adapter.validate_python(data)


def model_json(model: BaseModel, indent: int | None = 2) -> str:
    """`model` as JSON, as `validate_json` reads it back: pydantic's serializer refuses a str
    holding a lone surrogate (`experiment --json --out` into a folder whose name is not UTF-8
    was an internal error); json writes it as `\\udcff`, and anything not ASCII escaped."""
    return json.dumps(model.model_dump(mode="json"), indent=indent)
