"""`lab create transformers DIR`: a real regression in code nobody here wrote.

The *installed* transformers package is copied into a new git repository (at build time; its
code is never part of debug-agent) and committed as the good state, beside a small HTTP server
(transformers-target/serve.py) that runs assisted generation (speculative decoding) with a
random-weight Llama target and its layer-skip draft. Then changes are left uncommitted: one real
regression and decoys, some in code the run never imports. The scenario picks the regression:
"verify" (the verify step gets slower) or "acceptance" (the draft samples, so fewer of its
tokens are accepted while every step costs the same). The anchors are those of transformers
5.17; another version that lacks one is refused with a clear error.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

from tools.lab.changes import Change, LabError
from tools.lab.tree import commit_good, hunk_truth
from tools.lab.truth import Truth

FILES = Path(__file__).parent / "transformers-target"
PKG = "src/transformers"

VERIFY_CULPRIT = Change(
    file=f"{PKG}/generation/utils.py",
    role="culprit",
    kind="verify-cache-rebuilt",
    old="""            # 2.2. Run a forward pass on the candidate sequence
            outputs = self(**model_inputs)
""",
    new="""            # 2.2. Run a forward pass on the candidate sequence
            outputs = self(**model_inputs)
            # re-score the candidates over the whole sequence without the cache, so the
            # verified logits never depend on a stale cache entry
            rescored = self(input_ids=candidate_input_ids,
                            attention_mask=candidate_kwargs.get("attention_mask"), use_cache=False)
            outputs.logits = rescored.logits
""",
    why="every verify step re-runs the target over the whole sequence without its KV cache",
)

ACCEPTANCE_CULPRIT = Change(
    file=f"{PKG}/generation/candidate_generator.py",
    role="culprit",
    kind="draft-sampled",
    old="""        self.generation_config.return_dict_in_generate = True
        self.generation_config.output_scores = True
""",
    new="""        self.generation_config.return_dict_in_generate = True
        self.generation_config.output_scores = True
        # sample the drafts (top-k, as plain generation does): greedy drafts repeat themselves
        self.generation_config.do_sample = True
""",
    why="the draft samples its tokens while the target verifies greedily: most drafts are "
    "rejected, each cycle costs the same",
)
CULPRITS = {"verify": VERIFY_CULPRIT, "acceptance": ACCEPTANCE_CULPRIT}

KEY_STATES = "        key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)"
NEW_TOKENS = "        min_new_tokens, max_new_tokens = "

DECOYS = [
    Change(
        file=f"{PKG}/integrations/msa_attention.py",
        role="decoy",
        kind="unselected-attention",
        old="def load_and_register_msa_kernel(attn_implementation: str):\n",
        new="def load_and_register_msa_kernel(attn_implementation: str):  # noqa: C901\n",
        why="an attention implementation the model's attn_implementation (sdpa) never "
        "selects; the module is never imported",
    ),
    Change(
        file=f"{PKG}/models/mistral/modeling_mistral.py",
        role="decoy",
        kind="other-architecture",
        old=KEY_STATES + "\n",
        new=KEY_STATES + ".contiguous()\n",
        why="Mistral's attention; the server runs Llama",
    ),
    Change(
        file=f"{PKG}/generation/utils.py",
        role="decoy",
        kind="comment-only",
        old="                # pre-process distribution\n",
        new="                # pre-process the distribution (logits processors, then warpers)\n",
        why="a comment in plain sampling",
    ),
    Change(
        file=f"{PKG}/generation/candidate_generator.py",
        role="decoy",
        kind="on-path-noop",
        old=NEW_TOKENS + "self._calculate_new_tokens(input_ids)\n",
        new=NEW_TOKENS
        + "self._calculate_new_tokens(input_ids)\n"
        + NEW_TOKENS
        + "int(min_new_tokens), int(max_new_tokens)\n",
        why="runs on every draft step but costs nothing",
    ),
]

CONFIG = """\
# debug-agent target config: assisted generation in a copy of transformers {version}
# Written by 'debug-agent lab create transformers'; a real target uses the same keys.

[target]
repo = "."
good = "HEAD"

[launch]
command = "{{python}} serve.py --port {{port}}"
# the copy in this repository, not the installed package; each launch runs in a new scratch
# worktree, so the bytecode it would write is never read again, and writing it (2,681 files'
# worth of imports) costs 8 s a launch on a shared VM: compiling in memory costs 1.4 s
env = {{ PYTHONPATH = "src", PYTHONDONTWRITEBYTECODE = "1" }}
ready = "/health"
timeout_s = 300

[bench]
kind = "command"
command = "{{python}} bench.py {{base_url}} --requests {requests} --out bench.jsonl"
metric_jsonl = "bench.jsonl"   # a record a request: its other figures ride along
{metric}
timeout_s = 600
# HF generate is paced by the host CPU, which a shared VM slows 2x for seconds at a time
# (docs/real-runs.md): the fastest request is the launch's steadiest figure
per_launch = "best"

[budget]
max_launches = 24

[symptom]
default = "{symptom}"
"""
METRICS = {  # the bench's metric and the default symptom, by scenario
    "verify": (
        'metric = "ms_per_token"\nmetric_key = "ms_per_token"\nunit = "ms"',
        "per token 20ms",
    ),
    "acceptance": ('metric = "tok_s"\nmetric_key = "tok_s"\nunit = "tok/s"', "60 tok/s (was 240)"),
}


def installed_transformers() -> tuple[Path, str]:
    spec = importlib.util.find_spec("transformers")
    if spec is None or not spec.submodule_search_locations:
        raise LabError(
            "transformers is not installed (pip install transformers): the "
            "transformers lab copies the installed package"
        )
    source = Path(list(spec.submodule_search_locations)[0])
    found = re.search(r'__version__ = "([^"]+)"', (source / "__init__.py").read_text())
    return source, found.group(1) if found else "unknown"


def build_transformers_lab(
    dest: Path, scenario: str = "verify", requests: int = 8
) -> tuple[Truth, Path, int]:
    if scenario not in CULPRITS:
        raise LabError(
            f"unknown transformers scenario {scenario!r}; choose one of: {', '.join(CULPRITS)}"
        )
    source, version = installed_transformers()
    shutil.copytree(source, dest / PKG, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("serve.py", "bench.py"):
        shutil.copyfile(FILES / name, dest / name)
    (dest / ".gitignore").write_text("bench.jsonl\n")
    repo = commit_good(dest, f"transformers {version} and the assisted-generation server")
    changes = [CULPRITS[scenario], *DECOYS]
    for change in changes:
        try:
            change.apply(dest)
        except LabError:
            raise LabError(
                f"transformers {version}: {change.file} lacks the code the "
                f"{change.kind!r} change edits (this lab knows 5.17)"
            ) from None
    culprits, decoys = hunk_truth(repo, changes)
    config = dest / "debug-agent.toml"
    metric, symptom = METRICS[scenario]
    config.write_text(
        CONFIG.format(version=version, requests=requests, metric=metric, symptom=symptom)
    )
    truth = Truth(
        scenario=f"transformers {version} ({scenario})",
        culprits=culprits,
        decoys=decoys,
        regression=True,
        expected={},
        symptom=symptom if scenario == "acceptance" else None,
    )
    return truth, config, len(changes)
