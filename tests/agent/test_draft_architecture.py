"""A branch for the speculative draft's architecture is on the path: the draft model is served
too. A branch for an architecture neither model has is off; while the draft's architecture is
unknown, no architecture branch is called off."""

from __future__ import annotations

import git
import pytest

from agent.relevance import Facts, assess
from tests.conftest import make_repo
from tools.repo.candidates import Candidate, hunk_candidates

FILLER = "".join(f"    cfg.knob_{i} = {i}\n" for i in range(8))  # keeps the two hunks apart
GOOD = (
    "def tune(arch, cfg):\n"
    '    if arch == "LlamaForCausalLMEagle3":\n'
    "        cfg.steps = 3\n" + FILLER + '    if arch == "Glm4MoeForCausalLM":\n'
    '        cfg.quant = "fp8"\n'
    "    return cfg\n"
)
BAD = GOOD.replace("cfg.steps = 3", "cfg.steps = 4").replace('"fp8"', '"fp4"')
SPECULATIVE = {"speculative_algorithm": "EAGLE3", "model_path": "moonshotai/Kimi-K2.5"}


@pytest.fixture(scope="module")
def hunks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Candidate]:
    repo = make_repo(tmp_path_factory.mktemp("draft"), {"tune.py": GOOD})
    (repo / "tune.py").write_text(BAD)
    _, candidates = hunk_candidates(git.Repo(repo), "good")
    return {
        "draft": next(c for c in candidates if "cfg.steps = 4" in "".join(c.added_lines())),
        "glm": next(c for c in candidates if '"fp4"' in "".join(c.added_lines())),
    }


def _verdict(c: Candidate, architectures: list[str], args: dict) -> str:
    facts = Facts(server_args=args, architectures=architectures)
    return assess(c, facts, GOOD, BAD.splitlines()).reason


def test_the_draft_s_branch_is_on_and_another_model_s_off(hunks: dict[str, Candidate]) -> None:
    served = ["KimiK25ForConditionalGeneration", "LlamaForCausalLMEagle3"]
    assert _verdict(hunks["draft"], served, SPECULATIVE) == "no evidence against it"
    assert _verdict(hunks["glm"], served, SPECULATIVE) == "branch for another model architecture"


def test_an_unknown_draft_keeps_every_architecture_branch(hunks: dict[str, Candidate]) -> None:
    target_only = ["KimiK25ForConditionalGeneration"]
    for c in hunks.values():
        assert _verdict(c, target_only, SPECULATIVE) == "no evidence against it"
    # without speculative decoding there is no draft: the target is all the server runs
    plain = {"model_path": "moonshotai/Kimi-K2.5"}
    assert _verdict(hunks["draft"], target_only, plain) == "branch for another model architecture"
