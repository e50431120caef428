"""Files that can matter by their existence alone (added or deleted, never opened while the
server ran) share one file's prior per top folder: 20,000 files of an untracked folder (a
venv, node_modules) held 230 times the prior of the hunk that was the culprit, and the search
halved them through ten launches before it reached the culprit (14 launches where 6 do)."""

from __future__ import annotations

from agent.relevance import EXISTENCE_FACTOR, Relevance


def share_existence_priors(verdicts: dict[str, Relevance], files: dict[str, str]) -> None:
    """Each such verdict's prior factor divided among its top folder's (`files`: candidate id
    -> path); each says so in its reason."""
    groups: dict[str, list[Relevance]] = {}
    for verdict in verdicts.values():
        if verdict.prior_factor == EXISTENCE_FACTOR and verdict.candidate in files:
            folder, slash, _ = files[verdict.candidate].partition("/")
            groups.setdefault(folder if slash else ".", []).append(verdict)
    for top, group in groups.items():
        if len(group) < 2:
            continue
        where = "the top folder" if top == "." else f"{top}/"
        for verdict in group:
            verdict.prior_factor /= len(group)
            verdict.reason += (
                f"; one of {len(group)} files in {where} that can matter by their existence "
                "alone: they share one file's prior"
            )
