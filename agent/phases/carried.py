"""Carried: a member of the confirmed set that comes along for a partner, never a cause.

Two kinds. A deleted file: a vendored library's upgrade deletes the package its old code
imported (pip 19.3's urllib3 1.25.6 drops its copy of rfc3986), so reverting the new url.py
needs those files back and the set that reverts cleanly holds them; but a deleted file's code
never runs in the bad state, so it changes the time only through the code that imported it.
Linked to a member that is not itself a deletion (directly, or through other deleted files of
the set), it is carried with that member; a deletion linked to none (a module whose absence
sends its importer down a slower path) stays a culprit. And a member the revert needs but the
apply does not, once a smaller set applied to good reproduces the regression (attribute.py).
"""

from __future__ import annotations

from agent.phases.attribute import Verdict, best_trial
from agent.state import Confirmation, InvestigationState
from tools.code_paths.dependencies import file_change


def carried_deletions(state: InvestigationState, ids: list[str]) -> dict[str, str]:
    """The linked file deletions among `ids`: id -> the member they come along for."""
    members = set(ids)
    deleted = {c.id for c in state.candidates if c.id in members and file_change(c) == "deleted"}
    reach = sorted(members - deleted)  # breadth first from the members that can be causes
    partner = {cid: cid for cid in reach}
    while reach:
        here = reach.pop(0)
        for link in state.links:
            for one, other in ((link.a, link.b), (link.b, link.a)):
                if one == here and other in deleted and other not in partner:
                    partner[other] = partner[here]
                    reach.append(other)
    return {cid: partner[cid] for cid in sorted(deleted) if cid in partner}


def set_aside_carried(state: InvestigationState, conf: Confirmation, verdict: Verdict) -> None:
    """Fill conf.carried (member -> partner): the linked deletions, then what a smaller set
    that reproduces the regression leaves out."""
    conf.carried = carried_deletions(state, conf.culprits)
    causes = {cid for cid in conf.culprits if cid not in conf.carried}
    best = best_trial(state, conf, causes, verdict)
    for cid in sorted(causes - best):
        conf.carried[cid] = next(
            (
                other
                for link in state.links
                for one, other in ((link.a, link.b), (link.b, link.a))
                if one == cid and other in best
            ),
            min(best),
        )
    for cid, partner in conf.carried.items():  # each named beside a culprit
        while partner in conf.carried:
            partner = conf.carried[partner]
        conf.carried[cid] = partner
