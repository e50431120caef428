"""Launches for the investigation: one config, one server launch, one benchmark (via tools)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent.state import Config, InvestigationState, Launch
from agent.stats import launch_value
from tools.config import TargetConfig
from tools.experiment import ExperimentResult, ExperimentSpec, run_experiment
from tools.repo.candidates import CandidateSet


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
        self.config = config
        self.config_dir = config_dir
        self.cands = cands
        self.on_phase = on_phase
        self.on_request = on_request

    def launch(
        self, state: InvestigationState, config: Config, request: int, trace: bool = False
    ) -> tuple[Launch, ExperimentResult]:
        spec = (
            ExperimentSpec(base="bad", reverted=config.ids)
            if config.base == "bad"
            else ExperimentSpec(base="good", applied=config.ids)
        )
        out = Path(state.session_dir) / "launches" / f"{request:03d}"
        result = run_experiment(
            self.config,
            self.config_dir,
            self.cands,
            spec,
            state.metric,
            out,
            trace=trace,
            on_phase=self.on_phase,
            on_request=self.on_request,
        )
        launch = Launch(
            value=self.value_of(result, state),
            samples=result.metric.samples,
            log=result.log,
            request=request,
        )
        return launch, result

    def value_of(self, result: ExperimentResult, state: InvestigationState) -> float:
        """The launch's one number, as every judgement sees it."""
        return launch_value(result.metric.samples, self.config.bench.per_launch, state.worse)
