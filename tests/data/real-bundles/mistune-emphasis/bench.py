"""mistune's `*` emphasis on an unclosed `*` followed by a run of backslashes (CVE-2022-34749 /
GHSA-fw3v-x4f2-v673: catastrophic backtracking in the emphasis regex): `python bench.py TREE`
prints latency_ms three times, each the fastest of the calls made in 60 ms, importing mistune
from TREE (a single `mistune.py` at the good tag, a package from the rewrite on)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import report  # noqa: E402  (the benches' one timing loop)

TREE = os.path.abspath(sys.argv[1])
sys.path.insert(0, TREE)
import mistune  # noqa: E402

assert os.path.dirname(mistune.__file__).startswith(TREE), mistune.__file__

text = "*a" + "\\" * 28 + "\n"
mistune.markdown(text)  # warm-up; fails where the package has no markdown() yet
report(lambda: mistune.markdown(text))
