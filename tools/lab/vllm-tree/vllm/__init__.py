"""vLLM (lab): a small server with vLLM's layout, logs and OpenAI API, on a simulated GPU."""

import os

__version__ = "0.8.5"

# The environment the Ray cluster was started with (`ray start`, from the shell): its workers
# get this, plus the registered VLLM_* variables the driver copies. Read before any module of
# the server runs, as a raylet's environment is fixed before the server starts.
RAYLET_ENV = dict(os.environ)
