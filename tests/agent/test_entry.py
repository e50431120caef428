"""The `debug-agent` command from a plain (not editable) install, run with PYTHONPATH naming a
repository that has `agent/` and `tools/` packages of its own: debug-agent's own load first
(debug_agent.py), where before every command was a traceback."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

from tests.conftest import REPO_ROOT


def test_packages_of_the_same_names_on_pythonpath_do_not_shadow_ours(tmp_path: Path) -> None:
    installed = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
        + ["--target", str(installed), str(REPO_ROOT)],
        check=True,
        capture_output=True,
    )
    theirs = tmp_path / "their-repo"
    for name in ("agent", "tools"):
        (theirs / name).mkdir(parents=True)
        (theirs / name / "__init__.py").write_text("raise ImportError('the repository own')\n")
    # as the console script runs it: no site (so no editable finder), the install after
    # PYTHONPATH as site-packages would be, the dependencies from this environment
    program = (
        f"import sys; sys.path += [{str(installed)!r}, {sysconfig.get_paths()['purelib']!r}]; "
        "sys.argv = ['debug-agent', 'paths', '--help']; from debug_agent import main; main()"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", program],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(theirs), "PATH": "/usr/bin:/bin"},
        cwd=theirs,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "on-path, off-path or unknown" in done.stdout
