"""The investigation's state: everything the graph knows, as pydantic models (checkpointed)."""

from __future__ import annotations

import hashlib
import os
import statistics
from typing import Literal

from pydantic import BaseModel, Field, PrivateAttr, field_validator

from agent.relevance import Facts, Relevance
from agent.result import Claim, ReproductionResult, Status
from agent.symptom import Symptom
from tools.repo.candidates import Candidate
from tools.repo.commit_groups import CommitGroups

Phase = Literal[
    "gather",
    "hypothesize",
    "calibrate",
    "bisect",
    "search",
    "confirm",
    "releases",
    "report",
    "done",
]
Base = Literal["bad", "good"]
METRIC_UNITS = {"tok_s": "tok/s", "accept_len": "tokens", "verify_ms": "ms", "tpot_ms": "ms"}


class Launch(BaseModel):
    value: float  # the launch's statistic: median of its requests' metric
    samples: list[float]  # per-request values (agent.stats.kept_samples: at most 1001 kept)
    requests: int | None = None  # how many there were (None: as many as kept)
    log: str
    request: int  # the request that asked for it (makes re-runs idempotent)
    disturbed: str | None = None  # why it was set aside (agent.disturbed); then not counted
    traced: bool = False  # launched with the import trace (gather)
    retried: str | None = None  # a first attempt that failed to start, and why
    # every metric the bench derived, over its requests as `per_launch` says (tok/s, verify_ms,
    # accept_len): the speculative decomposition reads them, the search may switch to one
    metrics: dict[str, float] = Field(default_factory=dict)
    node: str | None = None  # the cluster node it ran on (None: this machine, or [host])
    # a [stack]'s state: its environment, "built in 3.2 s" or "cached: built before"
    environment: str | None = None


class Failure(BaseModel):
    """A launch that gave no measurement (ddmin's "?", git bisect's skip): the tree did not
    build, the server exited or was never ready, or the bench failed. Never a value."""

    request: int
    stage: Literal["build", "environment", "start", "died", "bench"]
    error: str  # one line
    log: str | None = None  # where to read more
    tail: list[str] = Field(default_factory=list)  # the log's last lines


class Variant(BaseModel):
    """A variant of the target's tree, identified by content: which candidates it holds (the
    state's `configs` and the transcript's `config` fields name these, for compatibility)."""

    key: str
    label: str
    base: Base
    ids: list[str]  # reverted from bad (base bad) or applied to good (base good)
    launches: list[Launch] = Field(default_factory=list)
    failures: list[Failure] = Field(default_factory=list)  # launches that measured nothing
    level: Literal["bad", "good"] | None = None  # judged equivalent to a reference: pools noise
    commit: str | None = None  # a state of the range as it was committed (a bisection's probe)
    pins: dict[str, str] = Field(default_factory=dict)  # [stack]: packages at other versions

    @property
    def values(self) -> list[float]:
        """The counted launches' values (a disturbed launch is kept but not counted)."""
        return [launch.value for launch in self.launches if launch.disturbed is None]

    def made(self, request: int) -> bool:
        """Whether the planned launch numbered `request` was made (measured or failed)."""
        made = [x.request for x in self.launches] + [x.request for x in self.failures]
        return request in made

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values)


def config_key(held: set[str]) -> str:
    return hashlib.sha1(os.fsencode("\0".join(sorted(held)))).hexdigest()[:12]


class Link(BaseModel):
    """Two candidates that move together, read from the code before any launch (one defines,
    renames or removes a name the other uses; one deletes or adds a module the other imports).
    A prior, not a proof: unresolved launches may split or merge what it joins."""

    a: str
    b: str
    reason: str  # "parser-406346 calls `_split_tokens`, defined in parser-2fb423"
    # when a needs b: "apply" (a's new lines use what b adds), "revert" (a's old lines use
    # what b removes), "both" (tools/code_paths/dependencies.py)
    when: Literal["apply", "revert", "both"] = "both"


class Hypothesis(BaseModel):
    candidate: str
    prior: float
    reasons: list[str]
    status: Literal["open", "dropped", "cleared", "suspected", "confirmed"] = "open"
    evidence: list[str] = Field(default_factory=list)
    carried_with: str | None = None  # linked to this kept one, but no traced launch used it
    # the share of the gap the profile ties it to (self time; half for inclusive time or a
    # knob's family): 0 without a tie (agent/profile)
    profile_weight: float = 0.0


class Task(BaseModel):
    """A search step of delta debugging: which of `ids` restore what reverting them restores."""

    kind: Literal["locate", "partner"] = "locate"
    ids: list[str]
    context: list[str] = Field(default_factory=list)  # reverted (locate) / applied (partner)
    low_key: str  # the config at the low end (nothing of `ids` changed)
    high_key: str  # the config at the high end (all of `ids` changed)
    stage: Literal["start", "first", "second"] = "start"
    first: list[str] = Field(default_factory=list)
    second: list[str] = Field(default_factory=list)
    first_key: str | None = None
    interference_checked: bool = False  # measure the second half too (no elimination)
    first_unresolved: bool = False  # the first half could not be judged (failed or unclear)
    by_commit: bool = False  # the first half is the later commits: a bisect probe


class PlannedLaunch(BaseModel):
    """The next launch the plan asks for, and why (its `id` numbers the launch's folder)."""

    id: int
    key: str
    why: str


class Finding(BaseModel):
    ids: list[str]
    low_key: str
    high_key: str


class Confirmation(BaseModel):
    culprits: list[str]
    revert_key: str
    apply_key: str
    drop_keys: dict[str, str] = Field(default_factory=dict)  # group -> "good + the others"
    groups: dict[str, list[str]] = Field(default_factory=dict)  # first member -> linked group
    rounds: int = 0
    undecided: list[str] = Field(default_factory=list)  # neither shown needed nor unneeded
    rest_searched_for: list[str] = Field(default_factory=list)  # its remainder was searched
    confirmed_before: list[str] = Field(default_factory=list)  # both ways, before completeness
    # needed, but a share whose interval reaches below [judge] min_share: id -> [r, low, high]
    negligible: dict[str, list[float]] = Field(default_factory=dict)
    # in the set, but a deleted file that comes along for a member: id -> that member
    carried: dict[str, str] = Field(default_factory=dict)
    trials: list[list[str]] = Field(default_factory=list)  # smaller sets applied to good
    rechecked: list[str] = Field(default_factory=list)  # part of the way: its nearer end again


class RangeState(BaseModel):
    """One state of the range, as git bisect sees it: the good commit, each first-parent
    commit after it, the working tree last when it holds uncommitted changes."""

    sha: str | None  # None: the working tree (the uncommitted changes on top of HEAD)
    subject: str = ""
    author: str = ""
    date: str = ""
    key: str = ""  # the config measuring it (a reference's key for either end)
    verdict: Literal["good", "bad", "skipped", ""] = ""
    why: str = ""  # the verdict in words: its share of the gap, or why it was skipped
    values: list[float] = Field(default_factory=list)  # its launches when judged
    weight: float = 1.0  # its prior: the highest of the suspected hunks in the files it touches
    unused: bool = False  # it touches only files no traced launch used: weighed light
    partial: bool = False  # judged bad, but short of the bad end: later commits hold the rest
    # part of the way: the config of its nearer neighbour, launched again beside it, before
    # it is judged (agent/phases/probe_verdict.py)
    recheck: str = ""
    # a merge: its base and the commits of its second parent, where the bisection goes on
    # when the merge is the first bad commit and its second parent is bad too
    merge_base: str = ""
    side: list[RangeState] = Field(default_factory=list)
    parent: str = ""  # a side commit's first parent (the first one's is older than the base)


class Bisection(BaseModel):
    """The commits first, on real trees: the first bad commit between good and bad."""

    states: list[RangeState]
    low: int = 0  # the latest state judged good
    high: int = 0  # the earliest state judged bad
    done: bool = False
    narrowed: bool = False  # the candidates are now the first bad commit's own hunks
    whole: bool = False  # not narrowed: the range's candidates are searched as they are
    range_ids: list[str] = Field(default_factory=list)  # the range's candidates, once narrowed
    range_good_sha: str = ""  # the investigation's good commit (good_sha moves to the parent)
    merge: str = ""  # the merge whose second parent was looked into (once)
    mainline: list[RangeState] = Field(default_factory=list)  # the first-parent states, once left
    package: str = ""  # a release search's package (its states stand for releases)
    # the commit that wrote the profile's hot lines, off the first-parent line, and its parent:
    # probed first (agent/phases/hot_commit.py); once that did not find the first bad commit,
    # `tried` keeps them for the report
    hot: list[RangeState] = Field(default_factory=list)
    tried: list[RangeState] = Field(default_factory=list)
    patterns: str = ""  # the commits changing a regex weigh more, and why (pattern_focus.py)

    @property
    def first_bad(self) -> RangeState:
        return self.states[self.high]

    @property
    def parent(self) -> RangeState:
        return self.states[self.low]

    @property
    def parent_sha(self) -> str:
        """The first bad commit's own first parent (on a merge's side line, the first commit's
        is older than the merge base measured good: good by ancestry)."""
        return self.first_bad.parent or self.parent.sha or "HEAD"

    @property
    def everything(self) -> list[RangeState]:
        """Every state in the order tested: the first-parent line, then a merge's side."""
        return [*self.tried, *self.mainline, *self.states]

    def skipped_between(self) -> list[RangeState]:
        return [s for s in self.states[self.low + 1 : self.high] if s.verdict == "skipped"]


class InvestigationState(BaseModel):
    session_id: str
    session_dir: str
    config_path: str
    good_env: str | None = None  # investigate --good-env: the good package set, kept for resume
    symptom: Symptom
    metric: str
    worse: Literal["higher", "lower"]
    max_launches: int
    deadline: float  # time.time() by which to stop
    min_share: float = 0.05  # [judge]: a culprit's share, at the low end of its interval
    launch_words: str = "median of {n} requests"  # how a launch's value is made, in words
    workload: str = ""  # what the bench measures, in words (the reproduction check quotes it)
    reproduction: ReproductionResult | None = None  # the references beside the symptom's numbers
    phase: Phase = "gather"
    stopped_in: Phase | None = None  # the phase the budget stopped
    candidates: list[Candidate] = Field(default_factory=list)
    good_sha: str = ""
    facts: Facts | None = None
    hypotheses: dict[str, Hypothesis] = Field(default_factory=dict)
    dropped: list[Relevance] = Field(default_factory=list)
    links: list[Link] = Field(default_factory=list)  # candidates that move together
    commits: CommitGroups = Field(default_factory=CommitGroups)  # the range's first level
    bisection: Bisection | None = None  # the commits tested on their own trees
    # a [stack]'s culprit package: its releases between the two versions, searched as commits
    # are (a release's version where a commit's sha stands: agent/phases/releases.py)
    releases: Bisection | None = None
    # inside its first slow release: the repository its hunks are read from, and the slow
    # side's commit there (the releases' files, or the project's own history)
    package_source: tuple[str, str] | None = None
    configs: dict[str, Variant] = Field(default_factory=dict)
    bad_key: str = ""
    good_key: str = ""
    tasks: list[Task] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    confirmation: Confirmation | None = None
    pending: list[PlannedLaunch] = Field(default_factory=list)  # the round being launched
    rounds: int = 0  # rounds of launches (a round holds up to [cluster] slots launches)
    next_request: int = 1
    launches: int = 0
    experiments: int = 0
    since_reference: int = 0  # launches since a reference was last re-measured (drift)
    steps: int = 0
    notes: list[str] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)
    llm: dict | None = None  # model name and usage, when the LLM reasoner ran
    status: Status | None = None
    result: dict | None = None
    # candidates by id, for `candidate`: made again whenever `candidates` is another list
    _index: tuple[tuple[int, int], dict[str, Candidate]] = PrivateAttr(default=((0, -1), {}))

    def candidate(self, cid: str) -> Candidate:
        """The candidate `cid` (KeyError if none): a scan per lookup made grouping 20,000
        candidates take 35 s."""
        key = (id(self.candidates), len(self.candidates))
        if self._index[0] != key:
            self._index = (key, {c.id: c for c in self.candidates})
        return self._index[1][cid]

    @field_validator("pending", mode="before")
    @classmethod
    def _one_pending_launch(cls, value: object) -> object:
        """Sessions saved before rounds held one pending launch, or none."""
        if value is None:
            return []
        return [value] if isinstance(value, dict) else value

    @property
    def unit(self) -> str:
        """The unit of the metric judged: the symptom's, or a part's the search switched to."""
        if not self.symptom.metric or self.symptom.metric == self.metric:
            return self.symptom.unit
        return METRIC_UNITS.get(self.metric, "")
