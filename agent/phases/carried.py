"""Carried: a member of the confirmed set that comes along for a partner, never a cause.

A vendored library's upgrade deletes the package its old code imported (pip 19.3's urllib3
1.25.6 drops its copy of rfc3986): reverting the new url.py needs those files back, so the
set that reverts cleanly holds them. But a deleted file's code never runs in the bad state:
its deletion changes the time only through the code that imported it. Linked to a member
that is not itself a deletion (directly, or through other deleted files of the set), it is
named "carried with" that partner, not as a culprit. A deletion linked to no such member (a
module whose absence sends its importer down a slower path) stays a culprit.
"""

from __future__ import annotations

from agent.state import Confirmation, InvestigationState

CARRIED = "a deleted file, whose code never runs in the bad state; it came back for its partner"


def set_aside_carried(state: InvestigationState, conf: Confirmation) -> None:
    """Fill conf.carried (member -> partner) with the set's linked file deletions."""
    members = set(conf.culprits)
    deleted = {c.id for c in state.candidates if c.id in members and c.deletes_file()}
    reach = sorted(members - deleted)  # breadth first from the members that can be causes
    partner = {cid: cid for cid in reach}
    while reach:
        here = reach.pop(0)
        for link in state.links:
            for one, other in ((link.a, link.b), (link.b, link.a)):
                if one == here and other in deleted and other not in partner:
                    partner[other] = partner[here]
                    reach.append(other)
    conf.carried = {cid: partner[cid] for cid in sorted(deleted) if cid in partner}
