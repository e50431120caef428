"""A variable the server's own process sets, which vLLM 0.8's Ray executor does not copy to its
workers (its log lists what it copies: tests/fixtures/vllm_logs/02-*, a real 0.8.4 Ray log):
dropped with the log line as evidence where no worker's environment was read; a VLLM_* name
it copies stays."""

from __future__ import annotations

from pathlib import Path

import git

from agent.relevance import Facts, assess
from tests.conftest import make_repo, sh
from tools.repo.candidates import hunk_candidates
from tools.server_log import parse_server_log_file

RAY_LOG = (
    Path(__file__).parents[1] / "fixtures" / "vllm_logs" / "02-v084-ray-tp16-deepseek-flashmla.log"
)


def _candidate(tmp_path: Path, line: str):
    repo = make_repo(tmp_path, {"serve.py": "import os\n"})
    (repo / "serve.py").write_text(f"import os\n{line}\n")
    sh(repo, "git", "add", "-A")
    return hunk_candidates(git.Repo(repo), "good")[1][0]


def test_an_nccl_variable_the_driver_sets_never_reaches_ray_workers(tmp_path: Path) -> None:
    facts = Facts(server=parse_server_log_file(RAY_LOG).server)
    candidate = _candidate(tmp_path, 'os.environ["NCCL_ALGO"] = "Tree"')
    verdict = assess(candidate, facts, "import os\n", ["import os"])
    assert verdict.on_path is False and verdict.reason == "env var set but never arrived"
    assert "shows its Ray executor copying only" in verdict.evidence[0]
    assert "VLLM_USE_V1" in verdict.evidence[0]


def test_a_copied_vllm_variable_is_kept(tmp_path: Path) -> None:
    facts = Facts(server=parse_server_log_file(RAY_LOG).server)
    candidate = _candidate(tmp_path, 'os.environ["VLLM_USE_V1"] = "0"')
    assert assess(candidate, facts, "import os\n", ["import os"]).on_path is None
