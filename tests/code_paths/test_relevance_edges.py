"""Relevance at the edges, on a real git repository: a file the bad state deleted, a non-Python
file, and a candidate judged off-path that a kept candidate needs."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from agent.hypothesize import hypothesize, kept_by_links, links_summary
from agent.relevance import Facts, Relevance, assess
from agent.state import Link
from tests.conftest import bare_state, make_repo, sh
from tools.gpu.info import parse_gpu_option
from tools.proc.import_trace import ImportTrace
from tools.proc.worker_env import ProcessEnv, WorkerEnv
from tools.repo.candidates import Candidate, hunk_candidates

GOOD = {
    "pkg/__init__.py": "",
    "pkg/api.py": "from pkg import helpers\n\n\ndef handle(x):\n    return x\n",
    "pkg/helpers.py": "def slow(x):\n    return x\n",
    "pkg/oldfast.py": "def run(text):\n    return text\n",
    "pkg/legacy.py": "def legacy(t):\n    from pkg import oldfast\n    return oldfast.run(t)\n",
    "pkg/unused.py": "LEVEL = 1\n",
    "pkg/launch.py": "import os\n",
    "kernels/fast.cu": "__global__ void fast() { }\n",
}
BAD = {
    "pkg/api.py": "from pkg import helpers\n\n\ndef handle(x):\n    return helpers.fast(x)\n",
    "pkg/helpers.py": "def slow(x):\n    return x\n\n\ndef fast(x):\n    return x * 2\n",
    "pkg/legacy.py": "def legacy(t):\n    return t\n",
    "pkg/unused.py": "LEVEL = 2\n",
    "pkg/launch.py": 'import os\nos.environ["NCCL_PROTO"] = "Simple"\n',
    "kernels/fast.cu": "__global__ void fast() { __syncthreads(); }\n",
}
BAD_TRACE = ImportTrace(
    processes=3, files=["pkg/__init__.py", "pkg/api.py", "pkg/legacy.py", "pkg/launch.py"]
)
GOOD_TRACE = ImportTrace(processes=3, files=[*BAD_TRACE.files, "pkg/oldfast.py"])


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = make_repo(tmp_path_factory.mktemp("edges"), {"README": "edges\n"})
    for name, text in GOOD.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-qm", "the package")
    sh(repo, "git", "tag", "-f", "good")
    for name, text in BAD.items():
        (repo / name).write_text(text)
    (repo / "pkg/oldfast.py").unlink()
    return repo


def _hunks(repo: Path) -> dict[str, Candidate]:
    return {c.file or "": c for c in hunk_candidates(git.Repo(repo), "good")[1]}


def _judge(repo: Path, file: str, facts: Facts) -> Relevance:
    path = repo / file
    source = path.read_text().splitlines() if path.exists() else []
    return assess(_hunks(repo)[file], facts, GOOD[file], source, repo)


def test_a_deleted_file_is_judged_by_what_the_good_reference_imported(repo: Path) -> None:
    assert _judge(repo, "pkg/oldfast.py", Facts(trace=BAD_TRACE)).on_path is None  # no good trace
    both = Facts(trace=BAD_TRACE, good_trace=GOOD_TRACE)
    assert _judge(repo, "pkg/oldfast.py", both).on_path is None  # the good reference imported it
    unused = Facts(trace=BAD_TRACE, good_trace=BAD_TRACE)
    verdict = _judge(repo, "pkg/oldfast.py", unused)
    assert verdict.on_path is False and verdict.evidence == [
        "pkg/oldfast.py, which the bad state deleted, was not imported by any of the 3 "
        "processes (import trace of the good reference)"
    ]
    assert _judge(repo, "pkg/unused.py", both).on_path is False  # a file the bad state has


def test_a_non_python_file_is_never_dropped(repo: Path) -> None:
    facts = Facts(
        trace=BAD_TRACE,
        good_trace=GOOD_TRACE,
        architectures=["DeepseekV3ForCausalLM"],
        gpu=parse_gpu_option("sm120"),
    )
    verdict = _judge(repo, "kernels/fast.cu", facts)
    assert verdict.on_path is None and verdict.reason == "no evidence against it"


def _workers(value: str | None, after_start: bool) -> WorkerEnv:
    env = {"NCCL_PROTO": value} if value else {}
    worker = ProcessEnv(pid=2, ppid=1, role="scheduler", cmdline="spawn_main", env=env)
    return WorkerEnv(root_pid=1, processes=[worker], after_start=after_start)


def test_a_variable_a_hunk_sets_is_judged_on_the_environment_after_start(repo: Path) -> None:
    def judged(workers: WorkerEnv) -> bool | None:
        return _judge(repo, "pkg/launch.py", Facts(trace=BAD_TRACE, workers=workers)).on_path

    assert judged(_workers(None, after_start=False)) is None  # it may be set inside the worker
    assert judged(_workers("Simple", after_start=True)) is None
    assert judged(_workers("LL", after_start=True)) is False


def test_what_a_kept_candidate_needs_is_kept_with_the_link_quoted(repo: Path) -> None:
    state = bare_state(
        good_sha=sh(repo, "git", "rev-parse", "good").strip(),
        candidates=list(_hunks(repo).values()),
        facts=Facts(trace=BAD_TRACE, good_trace=GOOD_TRACE),
    )
    said = hypothesize(state, git.Repo(repo))
    ids = {c.file: c.id for c in state.candidates}
    api, helpers, legacy, old = (
        ids[f"pkg/{n}.py"] for n in ("api", "helpers", "legacy", "oldfast")
    )
    calls = f"{api} calls `fast`, defined in {helpers}"
    assert {(link.a, link.b, link.reason) for link in state.links} == {
        (api, helpers, calls),
        (legacy, old, f"{legacy} imports `pkg.oldfast`, a module {old} deleted"),
    }
    assert f"{api} and {helpers} move together: {calls}" in said
    assert links_summary(state, examples=1) == [
        f"2 links between candidates that move together (e.g. {state.links[0].reason}; ...)"
    ]
    # links never override the trace: no process imported helpers.py, so it travels with its
    # partner and is never a cause
    carried = state.hypotheses[helpers]
    assert carried.status == "dropped" and carried.carried_with == api
    assert carried.evidence == [
        "pkg/helpers.py was not imported by any of the 3 processes (import trace of the bad state)",
        f"carried with {api} ({calls})",
    ]
    assert {d.candidate for d in state.dropped} == {ids["pkg/unused.py"], helpers}
    assert state.hypotheses[ids["kernels/fast.cu"]].status == "open"


def test_links_keep_whole_chains_and_only_what_a_kept_one_reaches() -> None:
    def verdict(cid: str, on_path: bool | None) -> Relevance:
        return Relevance(candidate=cid, on_path=on_path, reason="r", evidence=[])

    verdicts = {
        "kept": verdict("kept", None),
        "near": verdict("near", False),
        "far": verdict("far", False),
        "alone": verdict("alone", False),
        "other": verdict("other", False),
    }
    links = [
        Link(a="near", b="kept", reason="near uses it"),
        Link(a="far", b="near", reason="far uses near"),
        Link(a="alone", b="other", reason="both off-path"),
    ]
    reached = kept_by_links(verdicts, links)
    assert {cid: link.reason for cid, link in reached.items()} == {
        "near": "near uses it",
        "far": "far uses near",
    }
