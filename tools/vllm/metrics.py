"""vLLM's periodic lines: the engine's throughput stats and the speculative-decoding metrics.

- `Engine 000: Avg prompt throughput: X tokens/s, Avg generation throughput: Y tokens/s,
  Running: N reqs, Waiting: N reqs, GPU KV cache usage: x%, Prefix cache hit rate: y%`
  (v1/metrics/loggers.py; V0 says `Pending`/`Swapped`, 0.34 adds or drops parts);
- `SpecDecoding metrics: ...`: 0.8.5 `Draft acceptance rate: x%, Mean acceptance length: L,
  Accepted: N tokens, Drafted: N tokens, ...`; later `Mean acceptance length: L, Accepted
  throughput: ..., Avg Draft acceptance rate: x%`. Field order changed three times: read by name.

The mean acceptance length changed meaning in vLLM PR #17908 (after 0.8.5): before, accepted
tokens per draft; after, one more (the bonus token). `definition` says which one a line uses,
from its own numbers where they decide it (accepted, drafted and the number of speculative
tokens), else from the release's version, else from the fields only the newer line prints.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel

Definition = Literal["accepted per draft", "accepted per draft + 1 (bonus token)"]
WITHOUT_BONUS: Definition = "accepted per draft"
WITH_BONUS: Definition = "accepted per draft + 1 (bonus token)"

# a value counts only where its unit or the comma after it was printed: a number at the end
# of a line cut short may have lost digits
_PAIR = re.compile(
    r"([A-Z][A-Za-z ]{2,40}?): (-?\d[\d,]*(?:\.\d+)?)(?:(%| tokens/s| tokens| reqs)|(?=,))"
)
_STATS_NAMES = {
    "Avg prompt throughput": "prompt_throughput",
    "Avg generation throughput": "gen_throughput",
    "Running": "running_req",
    "Waiting": "queue_req",
    "Pending": "queue_req",
    "Swapped": "swapped_req",
    "GPU KV cache usage": "token_usage",
    "Prefix cache hit rate": "prefix_cache_hit_rate",
    "Preemptions": "preemptions",
}
_SPEC_NAMES = {
    "Draft acceptance rate": "acceptance_rate",
    "Avg Draft acceptance rate": "acceptance_rate",
    "Mean acceptance length": "mean_acceptance_length",
    "Accepted throughput": "accepted_throughput",
    "Drafted throughput": "drafted_throughput",
    "Accepted": "accepted",
    "Drafted": "drafted",
}


class SpecDecodeRecord(BaseModel):
    line: int
    mean_acceptance_length: float | None = None
    acceptance_rate: float | None = None  # percent
    accepted: int | None = None
    drafted: int | None = None
    definition: Definition | None = None
    how: str = ""  # why this definition


def _pairs(message: str, names: dict[str, str]) -> dict[str, float]:
    found: dict[str, float] = {}
    for m in _PAIR.finditer(message):
        name = names.get(m.group(1).strip())
        if name and name not in found:
            value = float(m.group(2).replace(",", ""))
            found[name] = value / 100 if m.group(3) == "%" and name == "token_usage" else value
    return found


def stats_fields(message: str) -> dict[str, Any] | None:
    """A throughput stats line's fields, as SGLang's decode records name them."""
    if "Avg generation throughput" not in message:
        return None
    fields: dict[str, Any] = dict(_pairs(message, _STATS_NAMES))
    for key in ("running_req", "queue_req", "swapped_req", "preemptions"):
        if key in fields:
            fields[key] = int(fields[key])
    return fields


def _version_tuple(version: str | None) -> tuple[int, ...] | None:
    found = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version or "")
    return tuple(int(g) for g in found.groups() if g is not None) if found else None


def _definition(
    record: SpecDecodeRecord, message: str, spec_tokens: int | None, version: str | None
) -> tuple[Definition | None, str]:
    length, accepted, drafted = record.mean_acceptance_length, record.accepted, record.drafted
    if length is not None and accepted is not None and drafted and spec_tokens:
        per_draft = accepted / (drafted / spec_tokens)
        if abs(length - per_draft) < 0.011 and abs(length - per_draft - 1) > 0.011:
            return WITHOUT_BONUS, (
                f"{accepted:g} accepted / ({drafted:g} drafted / {spec_tokens} tokens a draft) "
                f"= {per_draft:.2f}, the length printed"
            )
        if abs(length - per_draft - 1) < 0.011:
            return WITH_BONUS, (
                f"1 + {accepted:g} accepted / ({drafted:g} drafted / {spec_tokens} tokens a "
                f"draft) = {per_draft + 1:.2f}, the length printed"
            )
    if length is not None and accepted and drafted and not spec_tokens:
        fits = {
            definition: [
                k for k in range(1, 33) if round(bonus + accepted * k / drafted, 2) == length
            ]
            for definition, bonus in ((WITHOUT_BONUS, 0), (WITH_BONUS, 1))
        }
        decided = [d for d, ks in fits.items() if ks]
        if len(decided) == 1:
            k = fits[decided[0]][0]
            return decided[0], (
                f"only this definition fits the line's numbers: with {k} tokens a draft, "
                f"{accepted:g} accepted of {drafted:g} drafted give {length}"
            )
    release = _version_tuple(version)
    if release is not None and release[:2] != (0, 9):  # 0.9.0 came out as PR #17908 landed
        newer = release >= (0, 9)
        return (WITH_BONUS if newer else WITHOUT_BONUS), (
            f"vLLM {version} is {'after' if newer else 'before'} PR #17908, which added the "
            "bonus token"
        )
    if "Accepted throughput" in message or "Avg Draft acceptance rate" in message:
        return WITH_BONUS, "the line has the fields only releases after PR #17908 print"
    return None, "neither the line's numbers nor the release tell which definition it uses"


def spec_decode_record(
    number: int, message: str, spec_tokens: int | None, version: str | None
) -> SpecDecodeRecord | None:
    """A `SpecDecoding metrics:` line, with the definition of its acceptance length."""
    if "SpecDecoding metrics" not in message:
        return None
    fields = _pairs(message, _SPEC_NAMES)
    record = SpecDecodeRecord(
        line=number,
        mean_acceptance_length=fields.get("mean_acceptance_length"),
        acceptance_rate=fields.get("acceptance_rate"),
        accepted=int(fields["accepted"]) if "accepted" in fields else None,
        drafted=int(fields["drafted"]) if "drafted" in fields else None,
    )
    record.definition, record.how = _definition(record, message, spec_tokens, version)
    return record
