"""Launches for the investigation: one state of the target, one server launch, one benchmark
(via tools)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent.state import InvestigationState, Launch, Variant
from agent.stats import launch_value
from tools.config import TargetConfig
from tools.experiment import ExperimentOptions, ExperimentResult, ExperimentSpec, run_experiment
from tools.progress import ProgressCallbacks
from tools.repo.candidates import CandidateSet
from tools.repo.target import Target


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
    ) -> tuple[Launch, ExperimentResult]:
        """One launch of `variant` (a state of the target), for the planned launch numbered
        `planned` (its output folder, and the launch's record of what asked for it)."""
        spec = (
            ExperimentSpec(base="bad", reverted=variant.ids)
            if variant.base == "bad"
            else ExperimentSpec(base="good", applied=variant.ids)
        )
        out = Path(state.session_dir) / "launches" / f"{planned:03d}"
        options = ExperimentOptions(metric=state.metric, trace=trace, progress=self.progress)
        result = run_experiment(self.target, spec, out, options)
        launch = Launch(
            value=self.value_of(result, state),
            samples=result.metric.samples,
            log=result.log,
            request=planned,
        )
        return launch, result

    def value_of(self, result: ExperimentResult, state: InvestigationState) -> float:
        """The launch's one number, as every judgement sees it."""
        return launch_value(result.metric.samples, self.config.bench.per_launch, state.worse)
