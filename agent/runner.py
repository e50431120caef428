"""Launches for the investigation: one state of the target, one server launch, one benchmark
(via tools)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent.decomposition import WORSE
from agent.state import Failure, InvestigationState, Launch, Variant
from agent.stats import kept_samples, launch_value
from tools.bench.serving import BenchError
from tools.cluster.attempt import attempt
from tools.cluster.ray_pool import Job, JobOutcome, RayPool
from tools.config import TargetConfig
from tools.errors import BuildError
from tools.experiment import ExperimentOptions, ExperimentResult, ExperimentSpec
from tools.proc.server import ServerDied, ServerError
from tools.progress import ProgressCallbacks
from tools.repo.candidates import (
    CandidateSet,
    GitError,
    commit_changes,
    list_candidates,
    own_paths,
)
from tools.repo.target import Target, target_repo
from tools.repo.worktree import open_repo
from tools.stack.candidates import PACKAGE_PREFIX
from tools.stack.environment import Unresolved
from tools.stack.inside_release import commit_candidates, release_candidates

# what a launch that measured nothing failed at: its tree, its server, its bench
_STAGES: dict[type[Exception], str] = {
    GitError: "build",
    Unresolved: "environment",  # before BuildError: it is one
    BuildError: "build",
    ServerDied: "died",  # before ServerError: it is one
    ServerError: "start",
    BenchError: "bench",
}
TAIL_LINES = 15


class Runner:
    """What the graph's nodes need besides the state: the target and where to write."""

    def __init__(
        self,
        config: TargetConfig,
        config_dir: Path,
        cands: CandidateSet,
        on_phase: Callable[[str], None] | None = None,
        on_request: Callable[[int, int], None] | None = None,
    ) -> None:
        self.target = Target(config, config_dir, cands)
        self.progress = ProgressCallbacks(on_phase, on_request)
        self._pool: RayPool | None = None
        self._narrowed_to: tuple[str, ...] | tuple[str, str | None] | None = None

    def narrowed(self, low: str, high: str | None) -> CandidateSet:
        """The candidates between commit `low` and commit `high` (None: the working tree), now
        the target's: the search inside a first bad commit builds on its parent."""
        config, config_dir = self.config, self.config_dir
        repo_dir = target_repo(config, config_dir)
        overlay = self.cands.overlay
        if overlay is not None and overlay.history and high is not None:
            cands = commit_candidates(self.cands, low, high)  # a commit of the package's
        elif high is None:
            pinned = config.model_copy(
                update={"target": config.target.model_copy(update={"good": low})}
            )
            cands = list_candidates(repo_dir, pinned, config_dir)
        else:
            repo = open_repo(repo_dir)
            own = own_paths(Path(str(repo.working_tree_dir)), config_dir)
            cands = commit_changes(repo, low, high, own)
        if cands.candidates:  # none: the range stays the target, searched as a whole
            self.target = Target(config, config_dir, cands)
            self._narrowed_to = (low, high)
        return cands

    def narrowed_release(self, package: str, releases: tuple[str, str]) -> CandidateSet:
        """The hunks of `package` inside its first slow release (`releases`: the one before
        and it), now the target's; the investigation's own candidates stay its tree."""
        cands = release_candidates(self.config, self.config_dir, self.cands, package, releases)
        if cands.candidates:
            self.target = Target(self.config, self.config_dir, cands)
            self._narrowed_to = (package, *releases)
        return cands

    def follow(self, state: InvestigationState) -> None:
        """The target as the state has it: a resumed session narrowed to a commit builds there,
        one narrowed into a package's release builds on that release."""
        b, r = state.bisection, state.releases
        if r is not None and r.narrowed and self.cands.overlay is None:  # the package's first
            self.narrowed_release(r.package, (r.parent.sha or "", r.first_bad.sha or ""))
        if b is not None and b.narrowed and self._narrowed_to != (b.parent_sha, b.first_bad.sha):
            self.narrowed(b.parent_sha, b.first_bad.sha)  # then a commit inside it, if any

    @property
    def config(self) -> TargetConfig:
        return self.target.config

    @property
    def config_dir(self) -> Path:
        return self.target.config_dir

    @property
    def cands(self) -> CandidateSet:
        return self.target.cands

    def launch(
        self, state: InvestigationState, variant: Variant, planned: int, trace: bool = False
    ) -> tuple[Launch, ExperimentResult] | Failure:
        """One launch of `variant` (a state of the target), for the planned launch numbered
        `planned` (its output folder, and the launch's record of what asked for it); or, when
        its tree does not build, its server does not start (twice: flaky starts exist) or its
        bench fails, the Failure that says why (never a value)."""
        return self.launch_round(state, [(variant, planned, trace)])[0]

    def launch_round(
        self, state: InvestigationState, planned: list[tuple[Variant, int, bool]]
    ) -> list[tuple[Launch, ExperimentResult] | Failure]:
        """The round's launches (each: its variant, its number, whether traced): on the cluster
        when there is one ([cluster], at once up to its slots), else here one after the other;
        the outcomes in the order given."""
        self.follow(state)
        jobs = [self._job(state, variant, n, trace) for variant, n, trace in planned]
        if self.config.cluster.ray is None:
            outcomes = [
                JobOutcome(*attempt(self.target, job.spec, job.out, job.options), node="local")
                for job in jobs
            ]
        else:
            outcomes = self.pool().run(self.target, jobs)
        return [
            self._outcome(state, outcome, n, job)
            for (_, n, _), job, outcome in zip(planned, jobs, outcomes, strict=True)
        ]

    @property
    def slots(self) -> int:
        return self.config.cluster.slots

    def pool(self) -> RayPool:
        if self._pool is None:
            self._pool = RayPool(self.config.cluster)
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def _job(self, state: InvestigationState, variant: Variant, planned: int, trace: bool) -> Job:
        ids = with_carried_packages(state, variant.ids)
        spec = (
            ExperimentSpec(base="bad", commit=variant.commit)
            if variant.commit
            else ExperimentSpec(base="bad", reverted=ids, pins=variant.pins)
            if variant.base == "bad"
            else ExperimentSpec(base="good", applied=ids, pins=variant.pins)
        )
        out = Path(state.session_dir) / "launches" / f"{planned:03d}"
        options = ExperimentOptions(metric=state.metric, trace=trace, progress=self.progress)
        return Job(spec=spec, out=out, options=options)

    def _outcome(
        self, state: InvestigationState, outcome: JobOutcome, planned: int, job: Job
    ) -> tuple[Launch, ExperimentResult] | Failure:
        result = outcome.result
        if not isinstance(result, ExperimentResult):
            return _failure(result, planned, job.out)
        value = self.value_of(result, state)
        launch = Launch(
            value=value,
            samples=kept_samples(result.metric.samples),
            requests=len(result.metric.samples),
            log=result.log,
            request=planned,
            traced=job.options.trace,
            retried=f"start-up failed once: {outcome.retried}" if outcome.retried else None,
            metrics={**self.metric_values(result), state.metric: value},
            node=None if outcome.node == "local" else outcome.node,
            environment=_environment(result),
        )
        return launch, result

    def metric_values(self, result: ExperimentResult) -> dict[str, float]:
        """Each metric's value for the launch, by `per_launch` where the metric's worse side is
        known (a search that switches to a part judges every launch the same way)."""
        per_launch = self.config.bench.per_launch
        return {
            name: launch_value(m.samples, per_launch, WORSE[name])
            if name in WORSE
            else launch_value(m.samples, "median", "higher")
            for name, m in result.metrics.items()
        }

    def value_of(self, result: ExperimentResult, state: InvestigationState) -> float:
        """The launch's one number, as every judgement sees it."""
        return launch_value(result.metric.samples, self.config.bench.per_launch, state.worse)


def with_carried_packages(state: InvestigationState, ids: list[str]) -> list[str]:
    """`ids` and the packages carried with them: a package no launch loaded whose release pins
    (or is pinned by) one of them moves with it, or the state would not hold together (a
    carried hunk stays where it is: no launch imports its file)."""
    carried = [
        cid
        for cid, h in state.hypotheses.items()
        if h.carried_with in ids and cid.startswith(PACKAGE_PREFIX) and cid not in ids
    ]
    return [*ids, *carried]


def _environment(result: ExperimentResult) -> str | None:
    built = result.environment
    if built is None:
        return None
    return "cached: built before" if built.cached else f"built in {built.seconds:.1f} s"


def _failure(error: Exception, planned: int, out: Path) -> Failure:
    """What a failed launch left: the error's line and the last lines of its log."""
    stage = next(name for kind, name in _STAGES.items() if isinstance(error, kind))
    logs = (
        (sorted(out.glob("server-*.log")) or sorted(out.glob("build.log"))) if out.is_dir() else []
    )
    tail = logs[-1].read_text(errors="replace").splitlines()[-TAIL_LINES:] if logs else []
    log = str(logs[-1]) if logs else None
    return Failure(
        request=planned,
        stage=stage,  # type: ignore[arg-type]
        error=str(error).splitlines()[0] if str(error) else type(error).__name__,
        log=log,
        tail=tail,
    )
