"""mistune's inline parser on link text of repeated brackets (GHSA-qcq2-496w-v96p: quadratic
time parsing repeated `[` in parse_link_text): `python bench.py TREE` prints latency_ms three
times, each the fastest of the calls made in 60 ms, importing mistune from TREE (the rewrite
named the package mistune3 for a while: the bench takes whichever the tree holds)."""

import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import report  # noqa: E402  (the benches' one timing loop)

TREE = os.path.abspath(sys.argv[1])
sys.path.insert(0, TREE)
NAME = "mistune3" if os.path.exists(os.path.join(TREE, "mistune3", "__init__.py")) else "mistune"
mistune = importlib.import_module(NAME)
assert os.path.dirname(mistune.__file__).startswith(TREE), mistune.__file__

text = "[" * 1000 + "a"
mistune.html(text)  # warm-up
report(lambda: mistune.html(text))
