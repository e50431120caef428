"""markdown2's HTML tokenizer regex on an attribute-heavy tag that never closes (issue #633,
the shape of test/test_redos.py::issue_633): `python bench.py TREE` prints latency_ms three
times, each the fastest of the calls made in 60 ms, importing markdown2 from TREE/lib."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import report  # noqa: E402  (the benches' one timing loop)

TREE = os.path.abspath(sys.argv[1])
LIB = os.path.join(TREE, "lib")
sys.path.insert(0, LIB)

import markdown2  # noqa: E402  (from the tree under test, put first on the path above)

assert os.path.dirname(os.path.abspath(markdown2.__file__)) == LIB, markdown2.__file__
SIZE = 150
markdown2.markdown('<p m="1"' * 3 + " " * 6 + "</div")  # warm-up
text = '<p m="1"' * SIZE + " " * (2 * SIZE) + "</div"
report(lambda: markdown2.markdown(text))
