"""Device predicates and logging, shaped like sglang/srt/utils/common.py."""

from __future__ import annotations

import logging
import sys

import labgpu


def get_device_sm() -> int:
    return labgpu.device_sm()


def _check_cuda_device_version(majors: tuple[int, ...], cuda: tuple[int, int]) -> bool:
    return get_device_sm() // 10 in majors and labgpu.cuda_version() >= cuda


def is_sm90_supported() -> bool:
    return _check_cuda_device_version((9,), (12, 3))


def is_sm100_supported() -> bool:
    return _check_cuda_device_version((10,), (12, 8))


def is_sm120_supported() -> bool:
    return _check_cuda_device_version((12,), (12, 8))


def is_blackwell_supported() -> bool:
    return _check_cuda_device_version((10, 11, 12), (12, 8))


def configure_logger(prefix: str = "") -> None:
    logging.basicConfig(
        format=f"[%(asctime)s{prefix}] %(message)s",
        datefmt="%Y-%m-%d %H:%M:%S",
        level=logging.INFO,
        stream=sys.stdout,
        force=True,
    )
