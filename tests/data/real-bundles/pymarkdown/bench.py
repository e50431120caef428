"""Python-Markdown's horizontal-rule regex on a line of dashes around a word (issue #1055,
"Horizontal rule processing takes a long time or possibly forever"): `python bench.py TREE`
prints latency_ms three times, each the fastest of the calls made in 60 ms, importing markdown
from TREE."""

import os
import sys
import time

TREE = os.path.abspath(sys.argv[1])
sys.path.insert(0, TREE)

import markdown  # noqa: E402  (from the tree under test, put first on the path above)

assert os.path.dirname(os.path.abspath(markdown.__file__)) == os.path.join(TREE, "markdown")
markdown.markdown("---x---")  # warm-up
text = "-" * 20 + "hello" + "-" * 20
for _ in range(3):
    best, spent = float("inf"), 0.0
    while spent < 0.06:
        start = time.perf_counter()
        markdown.markdown(text)
        took = time.perf_counter() - start
        best, spent = min(best, took), spent + took
    print(f"latency_ms: {best * 1000:.3f}")
