"""A large JSON array read one item at a time (a torch trace of hundreds of MB): the same
items as json reads whole, wherever the reads cut the text; hostile documents refused with a
ValueError, in bounded memory."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tools import json_stream
from tools.json_stream import array_items

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    items=st.lists(_JSON, max_size=6),
    before=st.dictionaries(st.sampled_from(["a", "schemaVersion", "b"]), _JSON, max_size=2),
    spaces=st.sampled_from(["", " ", "\n  "]),
    chunk=st.integers(min_value=1, max_value=9),
    top_list=st.booleans(),
)
def test_the_items_are_those_json_reads_wherever_the_text_is_cut(
    items: list[object], before: dict, spaces: str, chunk: int, top_list: bool
) -> None:
    document: object = items if top_list else {**before, "traceEvents": items, "z": before}
    text = json.dumps(document, indent=len(spaces) or None)
    old = json_stream._CHUNK
    json_stream._CHUNK = chunk  # a window of a few characters cuts numbers and strings
    try:
        assert list(array_items(io.StringIO(spaces + text + spaces), "traceEvents")) == items
    finally:
        json_stream._CHUNK = old


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ("{}", []),
        ("[]", []),
        ('{"traceEvents": 5}', []),
        ('{"other": [1]}', []),
        ("[ 1 ,2 ]", [1, 2]),
    ],
)
def test_documents_without_items(text: str, items: list[object]) -> None:
    assert list(array_items(io.StringIO(text), "traceEvents")) == items


@pytest.mark.parametrize(
    "text",
    [
        "",
        "nul",
        "5",
        '{"traceEvents": [1, 2',  # cut short: the items read are not the whole
        '{"traceEvents": [1] ',
        '{"traceEvents": [1 2]}',
        '{"traceEvents": [{"a": 1}, ' + "[" * 200_000 + "]" * 200_000 + "]}",
    ],
)
def test_malformed_or_hostile_documents_are_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        list(array_items(io.StringIO(text), "traceEvents"))


def test_an_item_without_end_is_refused_at_the_limit_not_read_whole() -> None:
    """A string that never closes (a gzip bomb expands to one): refused once the item passes
    ITEM_LIMIT, with what was read of the stream bounded by about twice that."""

    class Endless(io.TextIOBase):
        """A document whose first item is a string that goes on for ever."""

        read_chars = 0

        def read(self, size: int | None = -1) -> str:
            size = 1 << 16 if size is None or size < 0 else size
            self.read_chars += size
            return '{"traceEvents": ["' if self.read_chars == size else "x" * size

    stream, old = Endless(), json_stream.ITEM_LIMIT
    json_stream.ITEM_LIMIT = 4 << 20
    try:
        with pytest.raises(ValueError, match="over"):
            list(array_items(stream, "traceEvents"))
    finally:
        json_stream.ITEM_LIMIT = old
    assert stream.read_chars < 4 * (4 << 20)
