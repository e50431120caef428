"""Picks the attention backend: VLLM_ATTENTION_BACKEND, else the platform's default; the class
is imported by its name, so only the chosen backend's module is ever imported."""

import importlib

from vllm import envs
from vllm.platforms.cuda import current_platform


def resolve_obj_by_qualname(qualname: str):
    module, _, name = qualname.rpartition(".")
    return getattr(importlib.import_module(module), name)


def get_attn_backend(use_mla: bool = False):
    selected = envs.VLLM_ATTENTION_BACKEND
    path = current_platform.get_attn_backend_cls(selected, envs.VLLM_USE_V1, use_mla)
    return resolve_obj_by_qualname(path)
