"""The engine on scenarios written by hand on the seed lab's good tree, not drawn by the generator.

    python tests/bench_hand_made.py [--only NAME ...] [--json]

Each scenario edits the lab's tree as a person would (a tuning JSON read at start-up, a module
renamed with its importer, thirty decoy hunks, a constant in another file, a module imported by
the first request only, a deleted fast path beside decoys of one file, a commit range with a
commit that does not start, a symlink, a binary file and a mode change, a 20 % secondary cause
under 15 % launch noise), investigates it and scores the answer: correct (every culprit named,
nothing else but what must travel with it), inconclusive (nothing false claimed) or wrong.

Not a test: it takes minutes, and the 15 % noise scenario may end either way but wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from agent.session import Session
from tools.lab.create import create_lab

ATT = "layers/attention/triton_backend.py"
RUNNER = "model_executor/model_runner.py"
EAGER = "EAGER_LAUNCH_MS_PER_LAYER = 0.02"


def _sh(repo: Path, command: str) -> None:
    subprocess.run(command, cwd=repo, shell=True, check=True, capture_output=True)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{path}: {old!r} not found"
    path.write_text(text.replace(old, new, 1))


def _commit(repo: Path, message: str) -> None:
    _sh(repo, f"git add -A && git -c user.email=b@b -c user.name=b commit -qm '{message}'")


def _good_tree(lab: Path, launch_cv: str | None = None) -> Path:
    """The seed lab with its own changes undone; its sources' root."""
    create_lab("seed", lab)
    _sh(lab, "git reset -q --hard && git clean -qfd python")
    if launch_cv:
        config = lab / "debug-agent.toml"
        text = re.sub(r'SGLANG_LAB_LAUNCH_CV = "[0-9.]+", ', "", config.read_text())
        config.write_text(
            text.replace("env = { ", f'env = {{ SGLANG_LAB_LAUNCH_CV = "{launch_cv}", ')
        )
    return lab / "python/sglang/srt"


def _splits_cost(src: Path, splits: str) -> None:
    """The attention's cost grows with its KV splits (decode and the verify's extend)."""
    _edit(src / ATT, "0.002 * (self.num_kv_splits > 1)", f"0.0025 * {splits}")
    _edit(src / ATT, "return 0.016 + read_kv", f"return 0.016 + 0.0025 * {splits} + read_kv")


def _import_into_attention(src: Path, line: str) -> None:
    """`line` (an import) at the top of the triton backend's own imports."""
    _edit(src / ATT, "from sglang.srt.model_executor", f"{line}\nfrom sglang.srt.model_executor")


def _decoys(src: Path) -> None:
    _edit(src / "managers/scheduler.py", '"""', '"""Scheduler (tidied). ')
    _edit(src / "layers/attention/flashinfer_backend.py", '"""', '"""Reviewed. ')
    _edit(
        src / RUNNER,
        "logger = logging.getLogger(__name__)",
        "logger = logging.getLogger(__name__)\n_UNUSED_LIMIT = 4096  # for a later change",
    )


def data_file(lab: Path) -> Truth:
    src = _good_tree(lab)
    (src / "layers/attention/triton_decode.json").write_text('{"num_kv_splits": 8}\n')
    (src / "layers/attention/flashinfer_tuning.json").write_text('{"workspace_mb": 128}\n')
    _edit(
        src / ATT,
        "from __future__ import annotations\n",
        "from __future__ import annotations\n\nimport json\nimport pathlib\n\n_TUNED = json.loads("
        "pathlib.Path(__file__).with_name('triton_decode.json').read_text())\n",
    )
    _edit(src / ATT, "self.num_kv_splits = 8", 'self.num_kv_splits = _TUNED["num_kv_splits"]')
    _splits_cost(src, "self.num_kv_splits")
    _commit(lab, "splits from a tuning file")
    (src / "layers/attention/triton_decode.json").write_text('{"num_kv_splits": 40}\n')
    (src / "layers/attention/flashinfer_tuning.json").write_text('{"workspace_mb": 512}\n')
    _decoys(src)
    return ["triton_decode.json"], []


def rename(lab: Path) -> Truth:
    src = _good_tree(lab)
    (src / "layers/attention/kv_split.py").write_text(
        "def splits(seq_len: int) -> int:\n    return 8\n"
    )
    _import_into_attention(src, "from sglang.srt.layers.attention.kv_split import splits")
    _splits_cost(src, "splits(batch.seq_len)")
    _commit(lab, "a split policy")
    _sh(
        lab,
        "git mv python/sglang/srt/layers/attention/kv_split.py "
        "python/sglang/srt/layers/attention/kv_split_policy.py && git reset -q",
    )
    (src / "layers/attention/kv_split_policy.py").write_text(
        '"""KV splits."""\n\n\ndef splits(seq_len: int) -> int:\n    return max(8, seq_len // 3)\n'
    )
    _edit(src / ATT, "attention.kv_split import", "attention.kv_split_policy import")
    _decoys(src)
    return ["kv_split_policy.py"], ["kv_split.py", "triton_backend.py"]  # they move together


def decoy_storm(lab: Path, fresh: bool = True) -> Truth:
    src, edited = _good_tree(lab) if fresh else lab / "python/sglang/srt", 0
    for path in sorted(p for p in src.rglob("*.py") if p.stat().st_size > 200):
        if edited < 30 and '"""' in (text := path.read_text()):
            path.write_text(text.replace('"""', '"""(doc) ', 1))
            edited += 1
    _edit(src / RUNNER, EAGER, "EAGER_LAUNCH_MS_PER_LAYER = 0.11")
    return ["model_runner.py"], []


def constant(lab: Path) -> Truth:
    src = _good_tree(lab)
    (src / "layers/attention/limits.py").write_text(
        '"""Limits."""\n\nMAX_SPLITS = 8\nWORKSPACE_MB = 128\n'
    )
    _import_into_attention(src, "from sglang.srt.layers.attention.limits import MAX_SPLITS")
    _edit(src / ATT, "self.num_kv_splits = 8", "self.num_kv_splits = MAX_SPLITS")
    _splits_cost(src, "self.num_kv_splits")
    _commit(lab, "limits")
    (src / "layers/attention/limits.py").write_text(
        '"""Kernel limits."""\n\nMAX_SPLITS = 40\nWORKSPACE_MB = 512\n'
    )
    _decoys(src)
    return ["limits.py"], []


def lazy_import(lab: Path) -> Truth:
    src = _good_tree(lab)
    (src / "layers/attention/decode_cost.py").write_text(
        "def extra(seq_len: int) -> float:\n    return 0.0\n"
    )
    _edit(
        src / ATT,
        "        read_kv = batch.batch_size * batch.seq_len * 2.0e-6\n        return 0.016",
        "        from sglang.srt.layers.attention.decode_cost import extra\n\n"
        "        read_kv = batch.batch_size * batch.seq_len * 2.0e-6\n"
        "        return extra(batch.seq_len) + 0.016",
    )
    _commit(lab, "a cost module, imported at the first request")
    (src / "layers/attention/decode_cost.py").write_text(
        "def extra(seq_len: int) -> float:\n    return 0.08\n"
    )
    _decoys(src)
    return ["decode_cost.py"], []


def deleted_fast_path(lab: Path) -> Truth:
    src = _good_tree(lab)
    _edit(
        src / ATT,
        "        return 0.016 + read_kv",
        "        cost = 0.096 + read_kv\n        if batch.num_tokens > 0:  # the fused path\n"
        "            cost -= 0.08\n        return cost",
    )
    _commit(lab, "fused path")
    _edit(src / RUNNER, "for the whole forward", "for the forward (all layers)")
    _edit(src / RUNNER, "        self.tp_size = tp_size", "        self.tp_size = int(tp_size)")
    _edit(
        src / ATT,
        "        if batch.num_tokens > 0:  # the fused path\n            cost -= 0.08\n",
        "",
    )
    return ["triton_backend.py"], []


def commit_range(lab: Path) -> Truth:
    src = _good_tree(lab)
    scheduler = src / "managers/scheduler.py"
    _edit(scheduler, '"""', '"""Scheduler. ')
    _commit(lab, "docs")
    fine = scheduler.read_text()
    scheduler.write_text(fine + "\ndef broken(:\n")
    _commit(lab, "wip (does not start)")
    scheduler.write_text(fine)
    _commit(lab, "fix the wip")
    _edit(src / RUNNER, EAGER, "EAGER_LAUNCH_MS_PER_LAYER = 0.11")
    _commit(lab, "eager launch accounting")
    _edit(src / "layers/attention/flashinfer_backend.py", '"""', '"""FlashInfer. ')
    _commit(lab, "docs 2")
    (src / "layers/attention/data.bin").write_bytes(bytes(range(256)) * 4)
    _sh(
        lab, "chmod +x python/sglang/srt/utils.py && ln -s utils.py python/sglang/srt/utils_link.py"
    )
    config = lab / "debug-agent.toml"
    config.write_text(config.read_text().replace('good = "HEAD"', 'good = "HEAD~5"'))
    return ["model_runner.py"], []


def secondary_in_noise(lab: Path) -> Truth:
    src = _good_tree(lab, launch_cv="0.15")
    _edit(src / RUNNER, EAGER, "EAGER_LAUNCH_MS_PER_LAYER = 0.085")  # about 80 % of the gap
    _edit(src / ATT, "return 0.016 + read_kv", "return 0.032 + read_kv")  # about 20 %
    _decoys(src)
    return ["model_runner.py", "triton_backend.py"], []


def worker_env(lab: Path) -> Truth:
    """The code under test sets an NCCL variable inside each worker before NCCL reads it; the
    main process sets a harmless one."""
    src = _good_tree(lab)
    _edit(
        src / "managers/scheduler.py",
        "    _exit_with_parent(parent_pid)\n",
        "    _exit_with_parent(parent_pid)\n"
        '    os.environ["NCCL_PROTO"] = "Simple"  # tuned for this node\n',
    )
    _edit(
        src / "entrypoints/engine.py",
        '    os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "8"\n',
        '    os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "8"\n'
        '    os.environ.setdefault("NCCL_DEBUG", "WARN")\n',
    )
    _decoys(src)
    return ["scheduler.py"], []


def flaky_storm(lab: Path) -> Truth:
    """A third of all launches fail at start-up, good and bad alike (the lab's own check,
    committed in the good state), beside thirty decoys."""
    from tools.lab.flaky_start import flaky_base_changes

    _good_tree(lab)
    for change in flaky_base_changes():
        _edit(lab / change.file, change.old, change.new)
    _commit(lab, "launch_server: start-ups that lose a race")
    config = lab / "debug-agent.toml"
    config.write_text(
        config.read_text().replace("env = { ", 'env = { SGLANG_LAB_START_FAILURE_RATE = "0.33", ')
    )
    truth = decoy_storm(lab, fresh=False)
    return truth


Truth = tuple[list[str], list[str]]  # the culprits' files; files that may travel with them
SCENARIOS: dict[str, Callable[[Path], Truth]] = {
    f.__name__: f
    for f in (
        data_file,
        rename,
        decoy_storm,
        constant,
        lazy_import,
        deleted_fast_path,
        commit_range,
        secondary_in_noise,
        worker_env,
        flaky_storm,
    )
}


def _stems(result: dict, field: str) -> set[str]:
    """The file stems of a result's culprits (objects) or undecided (ids: stem-hash)."""
    return {
        Path(c.get("file") or c["id"]).stem if isinstance(c, dict) else c.rsplit("-", 1)[0]
        for c in result.get(field) or []
    }


def score(result: dict, truth: Truth) -> str:
    """As `lab bench` scores: a culprit missed without saying so (undecided, or not ruled
    out beside a suspected set) is wrong."""
    named, culprits = _stems(result, "culprits"), {Path(f).stem for f in truth[0]}
    if result["status"] not in ("confirmed", "suspected") or not named:
        return "inconclusive"
    if not named <= culprits | {Path(f).stem for f in truth[1]}:
        return "wrong"
    if culprits <= named:
        return "correct"
    said = _stems(result, "undecided") | _stems(result, "not_ruled_out")
    return "inconclusive" if culprits <= named | said else "wrong"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=sorted(SCENARIOS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="debug-agent-hand-") as tmp:
        os.environ.setdefault("DEBUG_AGENT_LAB_TRUTH_DIR", tmp)
        for name in args.only or SCENARIOS:
            lab = Path(tmp) / name
            shutil.rmtree(lab, ignore_errors=True)
            truth = SCENARIOS[name](lab)
            with Session.start(lab, "verify 29ms (was 19)", Path(tmp) / "sessions") as session:
                result = session.run_to_end()
            named = [c["id"] for c in result.get("culprits") or []]
            row = {
                "scenario": name,
                "outcome": score(result, truth),
                "status": result["status"],
                "launches": result["launches"],
                "failed": len(result.get("unresolved") or []),
                "named": named,
            }
            rows.append(row)
            if not args.json:
                print(
                    f"{name:20} {row['outcome']:13} {row['status']:14} "
                    f"{row['launches']:3} launches ({row['failed']} failed)  {', '.join(named)}",
                    flush=True,
                )
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
