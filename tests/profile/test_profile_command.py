"""`debug-agent profile`: one state profiled by hand, on the seed lab's real server (its
sampler in every process, its torch traces over real HTTP); the stacks written for
flamegraph.pl and speedscope; bad input refused in one line."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from tests.conftest import run_cli

ALL_REDUCE = "[kernel] lab::PyNcclCommunicator.all_reduce"


def _profiled(lab: Path, *args: str) -> dict:
    done = run_cli("profile", "--json", *args, cwd=lab, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _per_unit(found: dict, function: str) -> float:
    return next(
        r["self_per_unit"] for r in found["times"]["gpu"]["top"] if r["function"] == function
    )


def test_profile_of_the_bad_and_the_good_state(seed_lab: Path, tmp_path: Path) -> None:
    bad = _profiled(seed_lab, "--out", str(tmp_path / "bad"))
    good = _profiled(seed_lab, "--good", "--out", str(tmp_path / "good"))
    assert bad["metric"]["name"] == "verify_ms" and bad["unit"] == "ms"
    gpu = bad["times"]["gpu"]
    assert gpu["top"][0]["function"] in {
        ALL_REDUCE,
        "python/sglang/srt/distributed/device_communicators/pynccl.py:"
        "PyNcclCommunicator.all_reduce",
    }
    # the split all-reduce: more than half as much again per verify in the bad state
    assert _per_unit(bad, ALL_REDUCE) > 1.5 * _per_unit(good, ALL_REDUCE)
    assert bad["times"]["cpu"]["processes"] >= 9  # the server and its eight schedulers
    for found in (bad, good):
        for times in found["times"].values():
            lines = Path(times["folded"]).read_text().splitlines()
            assert lines and all(line.rpartition(" ")[2].isdigit() for line in lines)
    assert any(ALL_REDUCE in line for line in Path(gpu["folded"]).read_text().splitlines())


def test_profile_shows_kernels_as_text_and_refuses_bad_input(
    seed_lab: Path, tmp_path: Path
) -> None:
    done = run_cli("profile", "--top", "3", "--out", str(tmp_path / "p"), cwd=seed_lab, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert ALL_REDUCE in done.stdout.replace("\n", "")  # not eaten as rich markup
    assert "stacks: " in done.stdout
    refused = run_cli("profile", "--good", "--revert", "x", cwd=seed_lab)
    assert refused.returncode == 1 and len(refused.stderr.strip().splitlines()) == 1
    assert "with --good, use --apply" in refused.stderr
    unknown = run_cli("profile", "--apply", "no-such-hunk", cwd=seed_lab)
    assert unknown.returncode == 1 and "Traceback" not in unknown.stderr
    (tmp_path / "a-file").write_text("")
    for command in ("profile", "experiment"):  # one check serves both
        taken = run_cli(command, "--out", str(tmp_path / "a-file"), cwd=seed_lab)
        assert taken.returncode == 1 and "not a folder" in taken.stderr, taken.stderr


def test_profile_says_when_no_process_was_sampled(seed_lab: Path, tmp_path: Path) -> None:
    lab = tmp_path / "lab"
    shutil.copytree(seed_lab, lab, symlinks=True)
    config = lab / "debug-agent.toml"
    text = config.read_text()
    assert "\n[profile]\n" in text
    config.write_text(
        text.replace("\n[profile]\n", "\n[profile]\nenabled = false\ntorch = false\n")
    )
    done = run_cli("profile", "--out", str(tmp_path / "p"), cwd=lab, timeout=300)
    assert done.returncode == 1 and "verify_ms" in done.stdout
    assert done.stderr.count("no profile:") == 1 and "Traceback" not in done.stderr


def test_an_out_folder_whose_name_is_not_utf8(seed_lab: Path, tmp_path: Path) -> None:
    """pydantic writes no lone surrogate (os.fsdecode's stand-in for the byte): `experiment
    --json` was an internal error; JSON cannot carry the name to the server's profiler: a
    reason, and the profile goes on with the CPU stacks."""
    out = tmp_path / os.fsdecode(b"out\xff")
    done = run_cli("experiment", "--json", "--out", str(out / "experiment"), cwd=seed_lab)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["metric"]["name"] == "verify_ms"
    found = _profiled(seed_lab, "--out", str(out / "profile"))
    assert "not UTF-8" in found["torch_profiler"]
    assert Path(found["times"]["cpu"]["folded"]).read_text().strip()
