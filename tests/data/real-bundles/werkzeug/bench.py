"""Werkzeug's multipart parser on a file part that starts with a newline and then holds no other
(GHSA-hrfv-mqp8-q5rw, CVE-2023-46136): `python bench.py TREE` prints latency_ms three times, each
the fastest of the calls made in 60 ms, importing werkzeug from TREE/src. 1 KiB chunks (the
parser's smallest) make many passes over the growing buffer."""

import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import report  # noqa: E402  (the benches' one timing loop)

TREE = os.path.abspath(sys.argv[1])
SRC = os.path.join(TREE, "src")
sys.path.insert(0, SRC)

import werkzeug  # noqa: E402  (from the tree under test, put first on the path above)
from werkzeug.formparser import MultiPartParser  # noqa: E402

assert os.path.dirname(werkzeug.__file__).startswith(SRC), werkzeug.__file__
BOUNDARY = b"BOUNDARYxyz"


def parse(payload: bytes) -> None:
    data = (
        b"--" + BOUNDARY + b"\r\n"
        b'Content-Disposition: form-data; name="f"; filename="a.bin"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n"
        + payload
        + b"\r\n--"
        + BOUNDARY
        + b"--\r\n"
    )
    _, files = MultiPartParser(buffer_size=1024).parse(io.BytesIO(data), BOUNDARY, len(data))
    assert len(files["f"].read()) == len(payload)


parse(b"\nhello")  # warm-up
payload = b"\n" + b"\0" * (256 * 1024)
report(lambda: parse(payload))
