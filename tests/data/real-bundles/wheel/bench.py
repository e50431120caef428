"""wheel (github.com/pypa/wheel), CVE-2022-40898 / GHSA-qwmp-2cf2-g9g6: the
WHEEL_INFO_RE wheel-filename regex in wheel/wheelfile.py (fixed in 0.38.0 by
88f02bc "Fixed potential DoS attack via WHEEL_INFO_RE") backtracks
polynomially on a crafted name. The input is a bad wheel filename of many
"a-" pieces with no ".whl" suffix, handed to WheelFile(), which parses the
name before it touches the disk and raises "Bad wheel filename" (what
`wheel unpack <name>` does). Trees before wheel/wheelfile.py existed keep the
same class in wheel/install.py, so the bench falls back to that."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import report  # noqa: E402  (the benches' one timing loop)

TREE = os.path.abspath(sys.argv[1])
sys.path.insert(0, TREE)

import warnings  # noqa: E402

warnings.simplefilter("ignore", DeprecationWarning)  # distutils/imp on 3.11

import wheel  # noqa: E402

assert os.path.dirname(wheel.__file__).startswith(TREE), wheel.__file__
try:
    from wheel.wheelfile import WheelFile  # noqa: E402  (0.32.0 and later)
except ImportError:
    from wheel.install import WheelFile  # noqa: E402  (0.31.x and earlier)

NAME = "a-" * 70 + "!"


def call():
    try:
        WheelFile(NAME)
    except Exception as exc:  # BadWheelFile / WheelError: "Bad wheel filename"
        assert "ad" in str(exc) and "filename" in str(exc), exc
    else:
        raise AssertionError("crafted filename was accepted")


report(call)
