"""The `debug-agent.toml` a lab writes: the same format users write for a real target."""

from __future__ import annotations

from pathlib import Path

SGLANG_EAGLE3 = (
    "{python} -m sglang.launch_server --model-path moonshotai/Kimi-K2.5 --tp 8 "
    "--speculative-algorithm EAGLE3 --speculative-num-steps 2 --speculative-eagle-topk 1 "
    "--speculative-num-draft-tokens 3 --port {port}"
)


def _toml_table(env: dict[str, str]) -> str:
    return "{ " + ", ".join(f'{k} = "{v}"' for k, v in sorted(env.items())) + " }"


def write_target_config(
    dest: Path,
    title: str,
    launch_env: dict[str, str],
    baseline_env: dict[str, str] | None = None,
    symptom: str | None = "verify 29ms",
    good: str = "HEAD",
) -> Path:
    baseline = ""
    if baseline_env is not None:
        baseline = (
            "\n[baseline]  # how the good reference was launched, where it differs from [launch]\n"
            f"env = {_toml_table(baseline_env)}\n"
        )
    text = f"""\
# debug-agent target config: {title}
# Written by 'debug-agent lab create'; a real target uses the same keys.

[target]
repo = "."      # the git repository under investigation
good = "{good}"   # known-good reference; the bad state is the working tree

[launch]
# SGLang's own command line; {{port}} is picked free for each launch, {{python}} is this Python
command = "{SGLANG_EAGLE3}"
env = {_toml_table(launch_env)}
ready = "/health"
timeout_s = 60
{baseline}
[bench]
kind = "generate"   # POST /generate, per-request samples from meta_info
requests = 8
concurrency = 1
input_len = 32
output_len = 128
warmup = 1

[profile]
# SGLang's torch profiler records the first 64 forward steps of the bench (num_steps): enough
# to see where the GPU time goes, and a trace small enough to read in a moment
torch_steps = 64
"""
    if symptom is not None:
        text += f'\n[symptom]\ndefault = "{symptom}"\n'
    path = dest / "debug-agent.toml"
    path.write_text(text)
    return path


def lab_env(noise_cv: float | None = None) -> dict[str, str]:
    """The launch env of a lab: the lab's SGLang on PYTHONPATH, and its simulated GPU's noise."""
    step_cv = 0.02 if noise_cv is None else noise_cv
    return {
        "PYTHONPATH": "python",
        "SGLANG_LAB_GPU": "sm120",
        "SGLANG_LAB_LINK": "pcie",
        "SGLANG_LAB_STEP_CV": f"{step_cv:g}",
        "SGLANG_LAB_LAUNCH_CV": f"{step_cv / 2:g}",
    }
