"""A GPU worker process: rank 0 of the lab's tensor-parallel group drives the simulated GPU
(the other ranks would run the same forwards in lockstep). Commands come as JSON lines on
stdin, answers go out on stdout; the worker exits when its driver closes the pipe."""

import json
import os
import sys

import labgpu

from vllm.logger import configure, init_logger
from vllm.v1.worker.gpu_model_runner import GPUModelRunner

logger = init_logger(__name__)


def main() -> None:
    answers = sys.stdout
    sys.stdout = sys.stderr  # logs and prints stay off the answer pipe
    configure(prefix=f"(RayWorkerWrapper pid={os.getpid()}) ", stream=sys.stderr)
    init = json.loads(sys.stdin.readline())
    clock = labgpu.Clock()
    runner = GPUModelRunner(init["model"], init["tp_size"], clock)
    runner.capture_model()
    answers.write(json.dumps({"ready": os.getpid()}) + "\n")
    answers.flush()
    for line in sys.stdin:
        step = json.loads(line)
        spent = runner.execute(step["num_tokens"], step["seq_len"], step["decode"])
        answers.write(json.dumps({"ms": spent}) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
