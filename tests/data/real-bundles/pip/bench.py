"""pip's vendored urllib3 parsing a URL with many percent-escapes (CVE-2020-7212: urllib3
1.25.2-1.25.7's `_encode_invalid_chars` upper-cases each `%xx` with a `str.replace` of its own,
quadratic in the escapes): `python bench.py TREE` prints latency_ms three times, each the
fastest of the calls made in 60 ms, importing pip from TREE/src."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import report  # noqa: E402  (the benches' one timing loop)

TREE = os.path.abspath(sys.argv[1])
SRC = os.path.join(TREE, "src")
sys.path.insert(0, SRC)

import pip  # noqa: E402  (from the tree under test, put first on the path above)
from pip._vendor.urllib3.util.url import parse_url  # noqa: E402

assert os.path.dirname(pip.__file__).startswith(SRC), pip.__file__
url = "http://example.com/" + "%aa" * 6000
report(lambda: parse_url(url))
