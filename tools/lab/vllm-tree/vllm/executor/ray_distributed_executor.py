"""Runs the model on workers started on a Ray cluster (vLLM 0.8's Ray executor).

A Ray worker does not inherit the driver's environment: it has the cluster's (`ray start`'s)
plus what the driver copies over, which in vLLM 0.8 is only the VLLM_* variables vLLM knows
(vllm/envs.py). A variable the server sets in its own process never reaches the workers.
"""

import json
import os
import subprocess
import sys

from vllm import RAYLET_ENV, envs
from vllm.logger import init_logger

logger = init_logger(__name__)


class WorkerDied(RuntimeError):
    pass


class RayDistributedExecutor:
    def __init__(self, config) -> None:
        copied = [name for name in envs.environment_variables if name in os.environ]
        logger.info("non_carry_over_env_vars from config: set()")
        logger.info("Copying the following environment variables to workers: %s", copied)
        env = {**RAYLET_ENV, **{name: os.environ[name] for name in copied}}
        self.worker = subprocess.Popen(
            [sys.executable, "-m", "vllm.v1.worker.gpu_worker", "ray::RayWorkerWrapper"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        self._send({"model": config.model, "tp_size": config.tensor_parallel_size})
        self._answer()

    def _send(self, message: dict) -> None:
        self.worker.stdin.write(json.dumps(message) + "\n")
        self.worker.stdin.flush()

    def _answer(self) -> dict:
        line = self.worker.stdout.readline()
        if not line:
            raise WorkerDied(f"the Ray worker exited with status {self.worker.wait()}")
        return json.loads(line)

    def execute_model(self, num_tokens: int, seq_len: int, decode: bool) -> float:
        self._send({"num_tokens": num_tokens, "seq_len": seq_len, "decode": decode})
        return self._answer()["ms"]

    def shutdown(self) -> None:
        self.worker.kill()
