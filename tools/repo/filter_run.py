"""A user's clean or smudge filter, run once per file state: what git invokes in its place.

    python filter_run.py DRIVER clean|smudge PATH     (stdin: the file; stdout: the result)

git runs a filter driver for every file it checks out (smudge) or hashes from a working tree
(clean); every scratch tree of an investigation checks out and hashes the same files again, so
a repository with filters ran them hundreds of times in one run. Here the result is kept, keyed
by the driver, its command, the path and the content, in the folder DEBUG_AGENT_FILTER_CACHE;
the driver's own command comes from DEBUG_AGENT_FILTERS (JSON: driver -> direction -> command),
as the user configured it, `%f` replaced with the path as git would. A failing filter is passed
through (its exit status and its stderr) and not kept. Standard library only: git starts it per
file, so it must start fast.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path


def main(argv: list[str]) -> int:
    driver, direction, path = argv
    command = json.loads(os.environ["DEBUG_AGENT_FILTERS"])[driver][direction]
    data = sys.stdin.buffer.read()
    key = hashlib.sha256(
        json.dumps([driver, direction, command, path]).encode() + b"\0" + data
    ).hexdigest()
    kept = Path(os.environ["DEBUG_AGENT_FILTER_CACHE"]) / key[:2] / key
    if kept.is_file():
        sys.stdout.buffer.write(kept.read_bytes())
        return 0
    done = subprocess.run(
        command.replace("%f", shlex.quote(path)), shell=True, input=data, capture_output=True
    )
    sys.stderr.buffer.write(done.stderr)
    if done.returncode:
        return done.returncode
    kept.parent.mkdir(parents=True, exist_ok=True)
    # written whole, then renamed: two git processes filtering one file state at once
    with tempfile.NamedTemporaryFile(dir=kept.parent, delete=False) as part:
        part.write(done.stdout)
    os.replace(part.name, kept)
    sys.stdout.buffer.write(done.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
