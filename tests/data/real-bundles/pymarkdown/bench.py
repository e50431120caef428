"""Python-Markdown's horizontal-rule regex on a line of dashes around a word (issue #1055,
"Horizontal rule processing takes a long time or possibly forever"): `python bench.py TREE`
prints latency_ms three times, each the fastest of the calls made in 60 ms, importing markdown
from TREE."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import report  # noqa: E402  (the benches' one timing loop)

TREE = os.path.abspath(sys.argv[1])
sys.path.insert(0, TREE)

import markdown  # noqa: E402  (from the tree under test, put first on the path above)

assert os.path.dirname(os.path.abspath(markdown.__file__)) == os.path.join(TREE, "markdown")
markdown.markdown("---x---")  # warm-up
text = "-" * 20 + "hello" + "-" * 20
report(lambda: markdown.markdown(text))
