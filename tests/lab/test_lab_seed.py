"""The seed lab's repository: SGLang's paths, the good state committed, the story uncommitted."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import run_cli
from tools.lab.create import create_lab
from tools.lab.truth import truth_path

STORY_FILES = [
    "python/sglang/srt/layers/attention/flashinfer_mla_backend.py",
    "python/sglang/srt/server_args.py",
    "python/sglang/srt/entrypoints/engine.py",
    "python/sglang/srt/managers/scheduler.py",
    "python/sitecustomize.py",
    "python/sglang/srt/distributed/parallel_state.py",
]


def git(lab: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(lab), *args], capture_output=True, text=True, check=True
    ).stdout


def test_diff_stat_lists_the_story_files(seed_lab: Path) -> None:
    stat = git(seed_lab, "diff", "HEAD", "--stat")
    for path in STORY_FILES:
        assert path in stat, f"{path} missing from git diff HEAD --stat:\n{stat}"


def test_paths_mirror_sglang(seed_lab: Path) -> None:
    for path in [
        "python/sglang/launch_server.py",
        "python/sglang/srt/server_args.py",
        "python/sglang/srt/layers/attention/attention_registry.py",
        "python/sglang/srt/layers/attention/triton_backend.py",
        "python/sglang/srt/layers/attention/flashinfer_mla_backend.py",
        "python/sglang/srt/speculative/eagle_worker.py",
        "python/sglang/srt/distributed/parallel_state.py",
        "python/sglang/srt/entrypoints/engine.py",
        "python/sglang/srt/managers/scheduler.py",
    ]:
        assert (seed_lab / path).is_file(), path


def test_head_is_the_good_state_and_reproducible(seed_lab: Path, tmp_path: Path) -> None:
    other = tmp_path / "again"
    create_lab("seed", other)
    assert git(seed_lab, "rev-parse", "HEAD") == git(other, "rev-parse", "HEAD")
    assert git(seed_lab, "diff", "HEAD") == git(other, "diff", "HEAD")
    head_text = git(seed_lab, "show", "HEAD:python/sglang/srt/distributed/parallel_state.py")
    assert "1 < num_tokens" not in head_text
    assert (
        "1 < num_tokens"
        in (seed_lab / "python/sglang/srt/distributed/parallel_state.py").read_text()
    )


def test_truth_names_the_culprit_and_lives_outside_the_lab(seed_lab: Path) -> None:
    done = run_cli("lab", "truth", str(seed_lab))
    assert done.returncode == 0, done.stderr
    truth = json.loads(done.stdout)
    assert [c["file"] for c in truth["culprits"]] == [
        "python/sglang/srt/distributed/parallel_state.py"
    ]
    assert truth["culprits"][0]["hunk"].startswith("@@ ")
    decoy_files = {d["file"] for d in truth["decoys"]}
    assert set(STORY_FILES) - decoy_files == {"python/sglang/srt/distributed/parallel_state.py"}
    path = truth_path(seed_lab)
    assert path.exists()
    assert seed_lab.resolve() not in path.resolve().parents
    tracked_or_not = subprocess.run(
        ["grep", "-rl", "culprit", str(seed_lab)], capture_output=True, text=True
    ).stdout
    assert tracked_or_not == ""


def test_target_config_describes_launch_and_bench(seed_lab: Path) -> None:
    from tools.config import load_config

    config = load_config(seed_lab)
    argv = config.launch_argv(31000)
    assert argv[1:3] == ["-m", "sglang.launch_server"]
    assert "--speculative-algorithm" in argv and "31000" in argv
    assert config.launch.env["PYTHONPATH"] == "python"
    assert config.bench.kind == "generate"
