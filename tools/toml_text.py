"""TOML from outside (the config, a uv.lock or pylock.toml) parsed with `tomllib`, where a
document nested deeper than the parser can follow is a TOMLDecodeError like any other malformed
one (tomllib raises RecursionError there: `x = [[[[…]]]]` made `check` an internal error)."""

from __future__ import annotations

import tomllib
from typing import Any


def parse_toml(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError("nested too deeply to read") from None
