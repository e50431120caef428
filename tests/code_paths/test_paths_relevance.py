"""Hunks under a GPU guard, judged on a real git repository and on a real lab launch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import git

from agent.gather import facts_from
from agent.relevance import Facts, assess
from tests.conftest import make_repo, run_cli, sh
from tools.experiment import ExperimentResult
from tools.gpu.info import GpuInfo, parse_gpu_option
from tools.repo.candidates import Candidate, hunk_candidates

FILLER = "    n += 0\n" * 7  # keeps the hunks apart
INNER_FILLER = "        n += 0\n" * 7  # the same, inside an if body that has an else


def _module(values: tuple[str, ...]) -> str:
    a, b, c, d, e = values
    return (
        "from sglang.srt.models.common import _is_npu\n"
        "from sglang.srt.utils import is_hip, is_sm100_supported, is_sm120_supported\n\n"
        "_is_hip = is_hip()\n\n\ndef pick(n):\n"
        f"{FILLER}    if _is_hip:\n        n = n + {a}\n{FILLER}"
        f"    if is_sm100_supported():\n        n = n * {b}\n{INNER_FILLER}"
        f"    else:\n        n = n * {c}\n{FILLER}"
        f"    if is_sm120_supported() and n > 0:\n        n = n - {d}\n{FILLER}"
        f"    if _is_npu:\n        n = {e}\n{FILLER}    return n\n"
    )


MODULE = "python/sglang/srt/layers/pick.py"


def _git_repo(tmp_path: Path) -> tuple[Path, dict[str, Candidate]]:
    """A good commit of a small SGLang-shaped package; the working tree changes each branch."""
    repo = make_repo(tmp_path, {"README": "guards\n"})
    files = {
        MODULE: _module(("1", "2", "3", "1", "0")),
        "python/sglang/srt/models/common.py": "from sglang.srt.utils import is_npu\n\n"
        "_is_npu = is_npu()\n",
        "python/sglang/srt/utils.py": "def is_hip():\n    return False\n",
    }
    files |= {
        f"python/sglang/{d}__init__.py": "" for d in ("", "srt/", "srt/layers/", "srt/models/")
    }
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-qm", "the package")
    sh(repo, "git", "tag", "-f", "good")
    (repo / MODULE).write_text(_module(("2", "4", "5", "2", "1")))
    _, cands = hunk_candidates(git.Repo(repo), "good")
    hunks = {}
    for c in cands:  # keyed by the guard line, the context just before the change
        rows = c.body_lines()
        hunks[next(rows[i - 1][1:].strip() for i, r in enumerate(rows) if r[:1] == "-")] = c
    assert set(hunks) == {
        "if _is_hip:",
        "if is_sm100_supported():",
        "else:",
        "if is_sm120_supported() and n > 0:",
        "if _is_npu:",
    }
    return repo, hunks


def _judge(repo: Path, hunks: dict[str, Candidate], gpu: GpuInfo | None, root: bool = True) -> dict:
    source = (repo / MODULE).read_text().splitlines()
    return {
        guard: assess(c, Facts(gpu=gpu), None, source, repo if root else None)
        for guard, c in hunks.items()
    }


def test_hunks_under_a_false_gpu_guard_are_dropped_with_the_guard(tmp_path: Path) -> None:
    repo, hunks = _git_repo(tmp_path)
    sm120 = parse_gpu_option("sm120")
    verdicts = _judge(repo, hunks, sm120)
    hip = verdicts["if _is_hip:"]
    assert hip.on_path is False and hip.reason == "branch for another GPU"
    assert hip.evidence[0].startswith(f"{MODULE}:") and hip.evidence[0].endswith(
        "sits under `if _is_hip:` (line 15)"
    )
    assert hip.evidence[1] == f"`_is_hip` is `is_hip()` ({MODULE}:4)"
    assert hip.evidence[2] == (
        "`_is_hip` is False on the server's GPU, cuda sm120 (compute capability 12.0) (--gpu sm120)"
    )
    assert verdicts["if is_sm100_supported():"].on_path is False
    assert verdicts["else:"].on_path is None  # the else branch of a false guard runs
    assert verdicts["if is_sm120_supported() and n > 0:"].on_path is None  # n decides
    npu = verdicts["if _is_npu:"]  # the alias lives in another module: followed there
    assert npu.on_path is False
    assert "`_is_npu` is `is_npu()` (python/sglang/srt/models/common.py:3)" in npu.evidence
    assert _judge(repo, hunks, sm120, root=False)["if _is_npu:"].on_path is None
    assert all(v.on_path is None for v in _judge(repo, hunks, None).values())
    rocm = _judge(repo, hunks, parse_gpu_option("hip"))
    assert rocm["if _is_hip:"].on_path is None and rocm["else:"].on_path is None
    sm100 = rocm["if is_sm100_supported():"]  # is_cuda() is false on ROCm
    assert sm100.on_path is False and "sits under `if is_sm100_supported():`" in sm100.evidence[0]
    assert (
        _judge(repo, hunks, parse_gpu_option("sm100"))["else:"]
        .evidence[0]
        .endswith("sits in the else branch of `if is_sm100_supported():` (line 24)")
    )


def test_the_lab_server_reports_its_gpu_and_gather_reads_it(seed_lab: Path, tmp_path: Path) -> None:
    lab = tmp_path / "lab"
    shutil.copytree(seed_lab, lab)
    done = run_cli(
        "experiment", "--json", "--samples", "2", "--out", str(tmp_path / "run"), cwd=lab
    )
    assert done.returncode == 0, done.stderr
    facts = facts_from(ExperimentResult.model_validate(json.loads(done.stdout)))
    assert facts.gpu is not None
    assert (facts.gpu.vendor, facts.gpu.sm) == ("cuda", 120)
    assert facts.gpu.name == "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    assert facts.gpu.source.startswith("server log server-1.log line ")
    assert "device_name=NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition" in facts.gpu.source
    node = GpuInfo(vendor="cuda", sm=90, source="nvidia-smi / rocminfo on the node")
    assert (
        facts_from(ExperimentResult.model_validate(json.loads(done.stdout)), node).gpu == facts.gpu
    )  # the server's own log wins over the node's answer
