"""The result of an investigation, typed: what `investigate --json` prints and result.json holds.

`agent.report.finish` builds an `InvestigationResult` and keeps its `model_dump()` (a plain
dict, secrets masked) as `state.result`; readers (report.md, report.html) validate it back
into the model, the session list into `ResultSummary` (a re-run's result.json is another
shape). The field order is the JSON's key order.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from agent.symptom import Symptom
from tools.profile.movers import Mover
from tools.repo.commit_info import CommitInfo

# defined here, where reading a result stays light (the session list, replay); agent.state
# uses them
Status = Literal[
    "confirmed",
    "suspected",
    "inconclusive",
    "no_regression",
    "not_reproduced",
    "budget_exhausted",
    "error",
]


class Claim(BaseModel):
    """What the LLM asserted, and whether the measurements support it."""

    candidate: str
    weight: float
    reason: str
    status: Literal["open", "supported", "refuted", "unresolved"] = "open"
    evidence: list[str] = Field(default_factory=list)


class ResultTarget(BaseModel):
    repo: str
    good: str  # the good ref as configured (or given with --good)


class MetricResult(BaseModel):
    name: str
    unit: str
    bad: float | None  # mean of the bad state's counted launches
    good: float | None
    after_fix: float | None  # with exactly the culprits reverted; None without culprits


class Culprit(BaseModel):
    kind: str  # the candidate's kind: hunk, env, ...
    id: str
    file: str  # the file, or the env variable's name
    summary: str
    share: float | None  # the share of the gap it restores, in [0, 1]
    share_ci: list[float] | None = None  # its 95 % interval, [low, high]
    evidence: list[str]
    line: int | None = None  # a hunk's first line in the bad file
    diff: str | None = None  # a hunk as git writes it: its `@@` line and body
    commit: CommitInfo | None = None  # the commit after good that brought most of its lines
    commits: list[CommitInfo] = []  # every such commit, most lines first (a range's diff
    # joins them)
    package: str | None = None  # a hunk of a package's release: "name before -> slow"


class DroppedResult(BaseModel):
    """A candidate dropped before any launch (relevance evidence)."""

    candidate: str
    file: str | None
    reason: str
    evidence: list[str]


class ClearedResult(BaseModel):
    """A candidate cleared by experiment."""

    candidate: str
    evidence: list[str]


class UnresolvedResult(BaseModel):
    """A configuration that measured nothing (it did not build, start or bench)."""

    config: str  # the configuration's label
    candidates: list[str]  # what it reverted (bad base) or applied (good base)
    stage: str
    error: str
    log: str | None


class SetAside(BaseModel):
    """A launch set aside as disturbed: kept, not counted."""

    config: str  # the configuration's label
    request: int
    value: float
    why: str


class LLMResult(BaseModel):
    """The LLM reasoner's model, usage and claims; `narrative` once the model wrote one."""

    model_config = ConfigDict(extra="allow")  # usage counters beyond these stay as they are

    model: str
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    claims: list[Claim]
    narrative: str | None = None

    @model_serializer(mode="wrap")
    def _claims_last(self, handler: SerializerFunctionWrapHandler) -> Any:
        """The keys in the order the engine writes them: the model and its usage counters
        (any beyond those typed here too), then the claims, then the narrative, which
        finish() leaves out and the graph's report node adds (possibly null)."""
        data = handler(self)
        if not isinstance(data, dict):
            return data
        tail = {key: data.pop(key) for key in ("claims", "narrative") if key in data}
        if "narrative" not in self.model_fields_set:
            tail.pop("narrative", None)
        return {**data, **tail}


class PartResult(BaseModel):
    bad: float
    good: float
    after_fix: float | None = None
    share: float | None = None  # of the throughput gap, on a log scale
    share_ci: list[float] | None = None  # its 95 % interval
    p: float  # of a change between bad and good


class ReproductionResult(BaseModel):
    passed: bool
    bad: float  # as measured
    good: float
    symptom_bad: float
    symptom_good: float | None
    workload: str
    far: list[str]  # what measured far from the symptom's numbers
    good_already_regressed: bool


class TestedState(BaseModel):
    """A state of the range the bisection tested on its own tree (or an end)."""

    sha: str | None  # None: the uncommitted changes
    subject: str
    verdict: str  # good, bad, skipped; "" when never tested
    why: str
    values: list[float]


class BisectionResult(BaseModel):
    """What git bisect would print, with the evidence behind each step."""

    first_bad: CommitInfo | None  # None: the uncommitted changes
    parent: str
    could_be: list[str] = []  # skipped commits that the first bad one could be, too
    tested: list[TestedState]
    # the share of the whole range's gap that the step from parent to first bad holds
    range_share: float | None = None
    # where the range's ends differ significantly from the step's: causes outside the commit
    outside: list[str] = []
    # the first bad commit, when later commits hold part of the gap: the good end of the
    # search for the rest (`investigate` goes on from it)
    rest_after: str | None = None


class ReleasesResult(BaseModel):
    """A [stack]'s culprit package: its first slow release between the two versions."""

    package: str
    good: str
    bad: str
    first_slow: str
    before: str  # the release before it, measured fast (or the good version)
    could_be: list[str] = []  # releases that do not run, which the first slow one could be too
    tested: list[TestedState]
    lines: list[str]  # the verdict in words


class RestSearch(BaseModel):
    """A search of the range after the first bad commit (agent/rest_of_range.py)."""

    session: str
    good: str  # the first bad commit it searched on from
    status: str
    first_bad: str | None
    culprits: list[str]
    launches: int


class InvestigationResult(BaseModel):
    session: str
    session_dir: str
    target: ResultTarget
    status: Status
    symptom: Symptom
    metric: MetricResult
    culprits: list[Culprit]
    unexplained_share: float | None  # the gap the culprits leave unexplained, in [0, 1]
    unexplained_ci: list[float] | None = None  # its 95 % interval, [low, high]
    undecided: list[str] = []  # in the set found, but neither shown needed nor not needed
    # with culprits suspected, not confirmed: the kept candidates no experiment cleared (a
    # share of the cause may lie among them)
    not_ruled_out: list[str] = []
    # needed, but with a share whose 95 % interval reaches under [judge] min_share: never a
    # culprit; id -> [share, low, high]
    negligible: dict[str, list[float]] = {}
    # in the set reverted and applied, but a deleted file that came along for a culprit (its
    # code never runs in the bad state): id -> that culprit
    carried: dict[str, str] = {}
    dropped: list[DroppedResult]
    cleared: list[ClearedResult]
    launches: int
    # rounds of launches ([cluster] slots run a round's launches at once; serially, one
    # launch a round); absent from results older than rounds
    rounds: int | None = None
    set_aside: list[SetAside] = []  # absent from results older than disturbed launches
    unresolved: list[UnresolvedResult] = []  # absent from results older than failed launches
    experiments: int
    notes: list[str]
    llm: LLMResult | None = None  # absent from results older than the LLM reasoner
    # the references beside the symptom's numbers (absent where the symptom gives none)
    reproduction: ReproductionResult | None = None
    # speculative decoding: tok_s, accept_length and cycle_ms for bad, good and after the fix,
    # each part's share of the throughput gap (absent where the server is not speculative)
    decomposition: dict[str, PartResult] | None = None
    # a commit range bisected on its commits' own trees (absent: no range, or not bisected)
    bisection: BisectionResult | None = None
    # the searches after the first bad commit, where later commits hold more of the gap
    rest: list[RestSearch] = []
    # a [stack]'s culprit package searched down to its first slow release
    releases: ReleasesResult | None = None
    # where the time moved between the traced references (self time, the largest rise first)
    time_moved: list[Mover] = []


class ResultSummary(BaseModel):
    """What the session list reads from any result.json: an investigation's
    (`InvestigationResult`) or a re-run's (`replay --rerun`, which has no metric or culprits)."""

    status: str | None = None
    launches: int | None = None
