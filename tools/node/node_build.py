"""A package set built as an environment on a node over SSH, run there by the node's Python.
Standard library only: uploaded beside the remote helper, run with one JSON argument.

The same environment as tools/stack/environment.py builds here, under the same name (a digest
of the set, this interpreter and the sources) in the node's own cache: with uv where the node
has it, else `venv` and pip; `--no-deps` of exactly the set, then a check that it holds
together. It prints one JSON line: the folder, its interpreter, whether it was built before,
the files of each distribution it holds (to tell which ones a launch loaded), or why the set
is unresolved.
"""

from __future__ import annotations  # the node's Python may be older than ours (3.8 and up)

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time

BUILT = ".debug-agent-built"
UNRESOLVED = ".debug-agent-unresolved"


def _run(argv: list, what: str, timeout_s: float) -> None:
    env = dict(os.environ, UV_NO_PROGRESS="1", VIRTUAL_ENV="", PIP_DISABLE_PIP_VERSION_CHECK="1")
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"could not {what} in {timeout_s:.0f} s") from None
    except OSError as e:
        raise RuntimeError(f"could not {what}: {e.strerror or e}") from None
    if done.returncode:
        lines = [x.strip() for x in (done.stderr + done.stdout).splitlines() if x.strip()]
        raise RuntimeError(f"could not {what}: " + ("; ".join(lines[-3:]) or "it failed"))


def _build(spec: dict, folder: str, wanted: str) -> None:
    where = []
    if spec.get("wheels"):
        where += ["--find-links", spec["wheels"]]
    if spec.get("index_url"):
        where += ["--index-url", spec["index_url"]]
    elif spec.get("wheels") and spec.get("offline"):
        where += ["--no-index"]
    python, timeout_s = os.path.join(folder, "bin", "python"), float(spec["timeout_s"])
    uv = shutil.which("uv")
    if uv:
        _run([uv, "venv", "--quiet", "--python", sys.executable, folder], "make it", timeout_s)
        offline = ["--offline"] if spec.get("offline") else []
        install = [uv, "pip", "install", "--quiet", "--python", python, *offline]
        check = [uv, "pip", "check", "--python", python]
    else:
        _run([sys.executable, "-m", "venv", folder], "make it (venv)", timeout_s)
        install = [python, "-m", "pip", "install", "--quiet"]
        check = [python, "-m", "pip", "check"]
    _run([*install, "--no-deps", "-r", wanted, *where], "install the set", timeout_s)
    try:
        _run(check, "check the set", timeout_s)
    except RuntimeError as e:
        with open(os.path.join(folder, UNRESOLVED), "w") as out:
            out.write(f"{e}\n")
        raise


def _files(python: str) -> dict:
    """Each distribution's files, absolute (its RECORD), as the environment's Python sees them."""
    program = (
        "import json, os, importlib.metadata as m\n"
        "out = {}\n"
        "for d in m.distributions():\n"
        "    site = os.path.realpath(str(d.locate_file('')))\n"
        "    name = (d.metadata['Name'] or '').lower().replace('_', '-')\n"
        "    out.setdefault(name, []).extend(\n"
        "        os.path.normpath(os.path.join(site, str(f))) for f in d.files or [])\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run([python, "-c", program], capture_output=True, text=True, timeout=120)
    return json.loads(done.stdout) if done.returncode == 0 else {}


def main() -> None:
    spec = json.loads(sys.argv[1])
    started = time.monotonic()
    interpreter = f"{sys.version} {sysconfig.get_platform()}"
    sources = {k: spec.get(k) for k in ("wheels", "index_url", "offline")}
    digest = hashlib.sha256(json.dumps([spec["lines"], interpreter, sources]).encode()).hexdigest()[
        :20
    ]
    root = os.path.expanduser(spec["root"])
    folder = os.path.join(root, digest)
    os.makedirs(root, exist_ok=True)
    reply: dict = {"folder": folder, "python": os.path.join(folder, "bin", "python")}
    with open(os.path.join(root, f"{digest}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two launches of one set: one builds, one waits
        broken = os.path.join(folder, UNRESOLVED)
        reply["cached"] = os.path.exists(os.path.join(folder, BUILT))
        try:
            if os.path.exists(broken):
                with open(broken) as f:
                    raise RuntimeError(f.read().strip())
            if not reply["cached"]:
                shutil.rmtree(folder, ignore_errors=True)  # one cut short
                os.makedirs(folder)
                wanted = folder + ".txt"
                with open(wanted, "w") as out:
                    out.write("\n".join(spec["lines"]) + "\n")
                _build(spec, folder, wanted)
                with open(os.path.join(folder, BUILT), "w") as out:
                    out.write("\n".join(spec["lines"]) + "\n")
        except RuntimeError as e:
            reply["unresolved"] = str(e)
    if "unresolved" not in reply:
        reply["files"] = _files(reply["python"])
    reply["seconds"] = round(time.monotonic() - started, 2)
    print(json.dumps(reply))


if __name__ == "__main__":
    main()
