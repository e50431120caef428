"""Flaky start-ups: a lab server that sometimes fails before it is ready, as real ones do (an
NCCL bootstrap that loses a race, a port taken a moment ago).

Whether one launch fails is drawn from the lab's seed and the launch's name, so an
investigation replays launch for launch. The check is written into the generated tree's
`launch_server.py` (the good state's, so every state of the scenario is equally flaky); its
source is `start_up_fails` below, so the lab and its tests share one definition.
"""

from __future__ import annotations

import inspect

from tools.lab.changes import Change

RATE_ENV = "SGLANG_LAB_START_FAILURE_RATE"
FLAKY_RATE = 0.2  # one launch in five fails at start-up
LAUNCH_SERVER = "python/sglang/launch_server.py"
START_UP_ERROR = (
    "NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error (run with "
    "NCCL_DEBUG=INFO for details)"
)


def start_up_fails() -> bool:
    """Whether this launch fails at start-up (SGLANG_LAB_START_FAILURE_RATE, seeded by
    SGLANG_LAB_SEED and DEBUG_AGENT_LAUNCH; unseeded, a fresh draw)."""
    import os
    import random

    rate = float(os.environ.get("SGLANG_LAB_START_FAILURE_RATE") or 0.0)
    seed = os.environ.get("SGLANG_LAB_SEED")
    launch = os.environ.get("DEBUG_AGENT_LAUNCH", "")
    rng = random.Random(f"{int(seed)}:{launch}:start-up" if seed else None)
    return rng.random() < rate


def flaky_base_changes() -> list[Change]:
    """What makes the template's launch_server.py flaky: the check's definition and its call
    before the server starts (committed in the good state, so no candidate of the diff)."""
    definition = Change(
        file=LAUNCH_SERVER,
        old='if __name__ == "__main__":\n',
        new=inspect.getsource(start_up_fails) + '\n\nif __name__ == "__main__":\n',
        role="decoy",
        kind="flaky-start-up",
        why="the lab server fails at start-up for some launches, the same ones every time",
    )
    call = Change(
        file=LAUNCH_SERVER,
        old="    try:\n        launch_server(prepare_server_args(sys.argv[1:]))\n",
        new="    try:\n"
        "        if start_up_fails():\n"
        f"            raise OSError({START_UP_ERROR!r})\n"
        "        launch_server(prepare_server_args(sys.argv[1:]))\n",
        role="decoy",
        kind="flaky-start-up",
        why="a failing launch exits with one error line before the server is ready",
    )
    return [definition, call]
