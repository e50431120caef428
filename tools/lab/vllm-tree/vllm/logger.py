"""vLLM's log format: `LEVEL MM-DD HH:MM:SS [file.py:line] message`, a worker's behind its
Ray actor's prefix, as the driver prints what Ray relays."""

import logging
import os
import sys

_FORMAT = "%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] %(message)s"


def configure(prefix: str = "", stream=None) -> None:
    handler = logging.StreamHandler(stream or sys.stdout)
    handler.setFormatter(logging.Formatter(prefix + _FORMAT, datefmt="%m-%d %H:%M:%S"))
    root = logging.getLogger("vllm")
    root.handlers[:] = [handler]
    root.setLevel(os.environ.get("VLLM_LOGGING_LEVEL", "INFO"))
    root.propagate = False


def init_logger(name: str) -> logging.Logger:
    return logging.getLogger(name)
