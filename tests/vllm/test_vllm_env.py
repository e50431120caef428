"""What vLLM 0.8's Ray executor copies to its workers (its log lists it: tests/fixtures/
vllm_logs/02-*, a real 0.8.4 Ray log) is evidence beside an env candidate, never a drop by
itself: a cluster started from the same environment, or code that sets the variable inside a
worker, still gives it to the workers."""

from __future__ import annotations

from pathlib import Path

import git

from agent.relevance import Facts, assess, ray_copy_note
from tests.conftest import make_repo, sh
from tools.repo.candidates import hunk_candidates
from tools.server_log import parse_server_log_file

FIXTURES = Path(__file__).parents[1] / "fixtures" / "vllm_logs"
RAY_LOG = FIXTURES / "02-v084-ray-tp16-deepseek-flashmla.log"


def test_the_ray_copy_list_is_evidence_not_a_drop(tmp_path: Path) -> None:
    facts = Facts(server=parse_server_log_file(RAY_LOG).server)
    note = ray_copy_note("NCCL_ALGO", facts)
    assert note is not None and "shows its Ray executor copying only" in note
    assert "VLLM_USE_V1" in note
    assert ray_copy_note("VLLM_USE_V1", facts) is None  # copied
    repo = make_repo(tmp_path, {"serve.py": "import os\n"})
    (repo / "serve.py").write_text('import os\nos.environ["NCCL_ALGO"] = "Tree"\n')
    sh(repo, "git", "add", "-A")
    candidate = hunk_candidates(git.Repo(repo), "good")[1][0]
    assert assess(candidate, facts, "import os\n", ["import os"]).on_path is None


def test_no_ray_line_no_note() -> None:
    facts = Facts(
        server=parse_server_log_file(
            FIXTURES / "06-v0110-apiserver-nondefault-args-resolved-arch.log"
        ).server
    )
    assert ray_copy_note("NCCL_ALGO", facts) is None
