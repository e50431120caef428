"""Logs kept within a bound: a chatty bench or server once left 110 MB a launch. The head (what
a server prints as it starts: its arguments, its backends) and the tail (how it ended, the
bench's result) are kept, and the cut is said where it was made. Values are read from the whole
output before the log is bounded."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

KEEP = 1 << 20  # bytes kept at each end of a log


def _cut_line(cut: int) -> str:
    return (
        f"\n[debug-agent: {cut:,} bytes cut here to keep the log small; the head and the tail "
        "are as written, and values were read from the whole output]\n"
    )


def bounded_text(text: str, keep: int = KEEP) -> str:
    """`text` with its middle cut when it holds more than twice `keep` characters."""
    if len(text) <= 2 * keep:
        return text
    return text[:keep] + _cut_line(len(text) - 2 * keep) + text[-keep:]


def bound_file(path: Path, keep: int = KEEP) -> None:
    """Cut the middle of the file at `path` when it is over twice `keep` bytes, streaming."""
    try:
        size = path.stat().st_size
    except OSError:
        return
    if size <= 2 * keep:
        return
    cut = path.with_name(path.name + ".cut")
    with path.open("rb") as source, cut.open("wb") as out:
        out.write(source.read(keep))
        out.write(_cut_line(size - 2 * keep).encode())
        source.seek(size - keep)
        shutil.copyfileobj(source, out)
    os.replace(cut, path)
