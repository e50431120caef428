"""Culprits that cannot be reverted alone: a helper and its use in separate hunks, a deleted
module and its importer.

Reverting only the hunk that defines (or deletes) what another hunk needs makes the server
fail at start-up (NameError, ImportError). The truth says which hunks are culprits (where the
slowness is) and which are companions (they must travel with a culprit's revert).
"""

from __future__ import annotations

from tools.lab.changes import Change
from tools.lab.library import ATTN, SRT
from tools.lab.tree import TEMPLATE

PARALLEL_STATE = f"{SRT}/distributed/parallel_state.py"


def helper_pair() -> list[Change]:
    """One file: a decorator defined near the top and applied to all_reduce further down; the
    slowness is the decorator's body, the use switches it on. Both are culprits."""
    definition = Change(
        file=PARALLEL_STATE,
        old="BYTES_PER_ELEMENT = 2  # bf16 activations\n",
        new="BYTES_PER_ELEMENT = 2  # bf16 activations\n"
        "\n\n"
        "def _token_by_token_for_small_batches(all_reduce):\n"
        '    """Keep every message inside NCCL\'s low-latency window on PCIe: small multi-token\n'
        '    batches are reduced one token at a time."""\n'
        "\n"
        "    def reduce(self, num_tokens: int, hidden_size: int) -> float:\n"
        "        if 1 < num_tokens <= 8:\n"
        "            return sum(all_reduce(self, 1, hidden_size) for _ in range(num_tokens))\n"
        "        return all_reduce(self, num_tokens, hidden_size)\n"
        "\n"
        "    return reduce\n",
        role="culprit",
        kind="helper-definition",
        why="defines the decorator that reduces small multi-token batches token by token "
        "(the slowness: +10 ms per verify cycle once it is applied)",
    )
    use = Change(
        file=PARALLEL_STATE,
        old="    def all_reduce(self, num_tokens: int, hidden_size: int) -> float:\n",
        new="    @_token_by_token_for_small_batches\n"
        "    def all_reduce(self, num_tokens: int, hidden_size: int) -> float:\n",
        role="culprit",
        kind="helper-use",
        why="applies the decorator to every all-reduce; without its definition the module "
        "fails to import (NameError at start-up)",
    )
    return [definition, use]


def helper_dependency() -> list[Change]:
    """Two files: utils.py gains a harmless env reader; model_runner.py imports it and, in the
    same hunk, raises the eager launch cost. The use is the culprit, the definition its
    companion."""
    definition = Change(
        file=f"{SRT}/utils.py",
        old="import logging\nimport sys\n\nimport labgpu\n\n\n",
        new="import logging\nimport os\nimport sys\n\nimport labgpu\n\n\n"
        "def get_float_env_var(name: str, default: float) -> float:\n"
        '    """A float from the environment; `default` when it is unset or empty."""\n'
        '    value = os.environ.get(name, "").strip()\n'
        "    return float(value) if value else default\n\n\n",
        role="companion",
        kind="helper-definition",
        why="a harmless env reader; model_runner.py imports it, so reverting it alone fails "
        "at start-up (ImportError)",
    )
    use = Change(
        file=f"{SRT}/model_executor/model_runner.py",
        old="from sglang.srt.models.registry import get_model_class\n"
        "\nlogger = logging.getLogger(__name__)\n\n"
        "GRAPH_REPLAY_MS = 0.25  # one graph launch for the whole forward\n"
        "EAGER_LAUNCH_MS_PER_LAYER = 0.02  # kernel launches when the forward runs eagerly\n",
        new="from sglang.srt.models.registry import get_model_class\n"
        "from sglang.srt.utils import get_float_env_var\n"
        "\nlogger = logging.getLogger(__name__)\n\n"
        "GRAPH_REPLAY_MS = 0.25  # one graph launch for the whole forward\n"
        "# kernel launches when the forward runs eagerly (unfused norms: tune per GPU)\n"
        'EAGER_LAUNCH_MS_PER_LAYER = get_float_env_var("SGLANG_EAGER_LAUNCH_MS", 0.18)\n',
        role="culprit",
        kind="helper-use",
        why="makes the eager launch cost configurable and raises its default from 0.02 to "
        "0.18 ms per layer: +10 ms per verify cycle",
    )
    return [definition, use]


def deleted_module() -> list[Change]:
    """The bad state deletes triton_backend.py (imported by the good state at start-up) and
    the registry's "triton" entry falls back to torch_native. The importer is the culprit;
    the deletion its companion."""
    backend = f"{ATTN}/triton_backend.py"
    deletion = Change(
        file=backend,
        old=(TEMPLATE / backend).read_text(),
        new="",
        role="companion",
        kind="deleted-module",
        why="triton_backend.py deleted; alone it changes nothing (nothing imports it any "
        "more), but the registry's old entry needs it back to start",
    )
    importer = Change(
        file=f"{ATTN}/attention_registry.py",
        old='@register_attention_backend("triton")\ndef create_triton_backend(runner):\n'
        "    from sglang.srt.layers.attention.triton_backend import TritonAttnBackend\n\n"
        "    return TritonAttnBackend(runner)\n",
        new='@register_attention_backend("triton")\ndef create_triton_backend(runner):\n'
        "    # the Triton kernels move to sgl-kernel; until they land, the reference path\n"
        "    from sglang.srt.layers.attention.torch_native_backend import "
        "TorchNativeAttnBackend\n\n"
        "    return TorchNativeAttnBackend(runner)\n",
        role="culprit",
        kind="deleted-module-importer",
        why="attention_backend='triton' now runs torch_native attention: slower decode and verify",
    )
    return [deletion, importer]
