"""The items of a large JSON array read one at a time, so that a file of gigabytes (a torch
profiler's trace: hundreds of MB a rank) costs the memory of one item, not of the whole
document (parsed whole, a 319 MB trace took 1.8 GB; streamed, 0.43 GB: see
tests/bench_torch_trace.py). json's own decoder reads every item and every other value; this
module only says where each begins. An item nested deeper than json can follow, or larger
than ITEM_LIMIT, is a ValueError, as is anything malformed.

ijson streams too, but builds a path string for every level of nesting open: a value nested
100,000 deep took it past 24 GB; json refuses it at once."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TextIO

ITEM_LIMIT = 64 << 20  # characters: no event of a trace comes near
_CHUNK = 1 << 20
_NOT_SPACE = re.compile(r"[^ \t\n\r]")  # JSON's white space is these four
_NUMBER_GOES_ON = re.compile(r"[0-9eE.+\-]*\Z")  # the window ends in what may be a number
_decode = json.JSONDecoder().raw_decode


class _Cursor:
    """A text stream read forward through a window that holds what is not yet read."""

    def __init__(self, stream: TextIO) -> None:
        self.stream, self.text, self.at, self.ended = stream, "", 0, False

    def _read(self, size: int) -> None:
        more = self.stream.read(size)
        self.ended = not more
        self.text = self.text[self.at :] + more
        self.at = 0

    def next_char(self) -> str:
        """The next character that is not white space, not taken ("" at the end)."""
        while True:
            if found := _NOT_SPACE.search(self.text, self.at):
                self.at = found.start()
                return found[0]
            self.at = len(self.text)
            if self.ended:
                return ""
            self._read(_CHUNK)

    def take(self, char: str) -> None:
        found = self.next_char()
        if found != char:
            raise ValueError(
                f"expected {char!r} in the JSON document, found {found!r}"
                if found
                else "the JSON document ends early"
            )
        self.at += 1

    def value(self) -> object:
        """The next value: read again with more text where it may run past the window (a
        number the window cuts as `1` of `1.5` reads as a number too)."""
        self.next_char()
        size = _CHUNK
        while True:
            try:
                value, end = _decode(self.text, self.at)
            except RecursionError:
                raise ValueError("JSON nested too deeply to read") from None
            except json.JSONDecodeError:
                if self.ended:
                    raise
                end = None
            if end is not None and (self.ended or not _NUMBER_GOES_ON.match(self.text, end)):
                self.at = end
                return value
            if len(self.text) - self.at > ITEM_LIMIT:
                raise ValueError(f"a JSON value over {ITEM_LIMIT} characters")
            self._read(size)
            size *= 2


def _items(cursor: _Cursor) -> Iterator[object]:
    cursor.take("[")
    if cursor.next_char() == "]":
        cursor.at += 1
        return
    while True:
        yield cursor.value()
        if cursor.next_char() == "]":
            cursor.at += 1
            return
        cursor.take(",")


def array_items(stream: TextIO, key: str) -> Iterator[object]:
    """The items of the document where it is an array, or of the array at `key` in the
    document's object (other keys' values are read and dropped; no such key: no items)."""
    cursor = _Cursor(stream)
    if cursor.next_char() == "[":
        yield from _items(cursor)
        return
    cursor.take("{")
    if cursor.next_char() == "}":
        return
    while True:
        name = cursor.value()
        cursor.take(":")
        if name == key and cursor.next_char() == "[":
            yield from _items(cursor)
        else:
            cursor.value()
        if cursor.next_char() == "}":
            return
        cursor.take(",")
