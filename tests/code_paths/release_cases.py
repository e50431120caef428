"""Server configurations on real SGLang releases (release_cases.toml), each with a log in that
release's own format and the truth for a set of files, read from that release's source.

A log is what the release prints: the `server_args=ServerArgs(...)` dump (every field of the
release's own ServerArgs, its defaults overridden by the case), the lines it prints when it
picks a backend after the dump, the fused-MoE config line or aiter's build line that names the
GPU, and one `Load weight end.` line per model runner and rank (0.5 adds `elapsed=`).

How the truth was read (each fact checked in that release's source):
- the attention backend a runner builds is on; another backend's module is on only where a
  module on the path imports it at module level (0.5.9: trtllm_mla imports flashinfer_mla,
  which imports flashinfer; eagle_worker_v2 imports triton and trtllm_mla; 0.4.x: flashmla,
  cutlass_mla and trtllm_mla import flashinfer_mla);
- the model files: the target's, the draft's, and the model files they import
  (llama_eagle/llama_eagle3 -> llama, deepseek_nextn -> deepseek_v2, kimi_k25 -> deepseek_v2);
  another model's file is off (it defines only other models);
- the draft worker: the one `Scheduler.__init__` (0.4) or `SpeculativeAlgorithm.create_worker`
  (0.5) picks from the dump's `disable_overlap_schedule`, and what it imports at module level;
- parallel_state's GroupCoordinator imports every platform's communicator in a constructor
  that runs everywhere: npu_communicator is on, even on CUDA;
- the package's tests and benchmark scripts are off (no server module imports them).
Files whose truth could not be read with certainty are left out.
"""

from __future__ import annotations

import ast
import tomllib
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).with_name("release_cases.toml")
_MOE = "Using default MoE kernel config. Performance might be sub-optimal! Config file not "
GPU_LINES = {  # the lines real servers print that name their GPU
    "h100": _MOE + "found at /sgl/E=256,N=256,device_name=NVIDIA_H100_80GB_HBM3.json",
    "h200": _MOE + "found at /sgl/E=256,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8.json",
    "b200": _MOE + "found at /sgl/E=256,N=256,device_name=NVIDIA_B200,dtype=fp8_w8a8.json",
    "sm120": _MOE + "found at /sgl/E=384,N=256,"
    "device_name=NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition,dtype=int4_w4a16.json",
    "mi300x": "[aiter] start build [module_aiter_enum] under /sgl/aiter/jit/build (gfx942)",
}


def release_defaults(pkg: Path) -> dict:
    """Every field of the release's own ServerArgs with its literal default, in its order."""
    tree = ast.parse((pkg / "srt" / "server_args.py").read_text())
    found: dict = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "ServerArgs":
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    try:
                        value = ast.literal_eval(item.value) if item.value else None
                    except ValueError:
                        value = None  # a factory or a computed default: unset
                    found[item.target.id] = value
    return found


@dataclass
class Case:
    release: str
    name: str
    gpu: str
    loaded: list[str]  # the model classes the runners load, the target's first
    args: dict
    truth: dict[str, str]  # file -> "on" / "off"
    after: list[str]  # lines SGLang prints after the dump
    held_out: bool  # written after the engine's changes, never tuned for

    def log(self, pkg: Path) -> str:
        args = {**release_defaults(pkg), **self.args}
        stamp = "[2026-03-02 09:14:{:02d}{}] "
        dump = ", ".join(f"{k}={v!r}" for k, v in args.items())
        rows = [stamp.format(1, "") + f"server_args=ServerArgs({dump})"]
        rows += [stamp.format(2, " TP0") + line for line in self.after]
        rows.append(stamp.format(3, " TP0") + GPU_LINES[self.gpu])
        runner = (pkg / "srt" / "model_executor" / "model_runner.py").read_text()
        elapsed = "elapsed=41.20 s, " if 'f"elapsed=' in runner else ""  # as the release prints
        for n, name in enumerate(self.loaded):
            for rank in range(2):
                rows.append(
                    stamp.format(10 + n, f" TP{rank}")
                    + f"Load weight end. {elapsed}type={name}, dtype=torch.bfloat16, "
                    "avail mem=21.37 GB, mem usage=72.84 GB."
                )
        return "\n".join(rows) + "\n"


def _expand(names: list[str], data: dict) -> list[str]:
    """`A:triton_backend` -> its path; a universe's name -> its files."""
    out: list[str] = []
    for name in names:
        if name in data["universes"]:
            universe = data["universes"][name]
            out += _expand(universe["files"] if isinstance(universe, dict) else universe, data)
        else:
            prefix, _, rest = name.partition(":")
            out.append(f"{data['prefixes'][prefix]}{rest}.py")
    return out


def cases() -> list[Case]:
    data = tomllib.loads(DATA.read_text())
    found = []
    for raw in data["case"]:
        on = set(_expand(raw["on"], data))
        files = set(_expand([*raw["universes"], *raw.get("more", [])], data))
        files -= set(_expand(raw.get("leave_out", []), data))
        assert on <= files, sorted(on - files)
        found.append(
            Case(
                release=raw["release"],
                name=raw["name"],
                gpu=raw["gpu"],
                loaded=raw["loaded"],
                args=raw["args"],
                truth={f: "on" if f in on else "off" for f in sorted(files)},
                after=raw.get("after", []),
                held_out=raw.get("held_out", False),
            )
        )
    return found
