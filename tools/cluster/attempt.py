"""One experiment as the investigation makes it: started once more when its server did not
start the first time (start-ups can be flaky), the first attempt's folder kept beside. A server
that came up and then ended while measured is an answer about its tree, not retried."""

from __future__ import annotations

from pathlib import Path

from tools.bench.serving import BenchError
from tools.errors import BuildError
from tools.experiment import ExperimentOptions, ExperimentResult, ExperimentSpec, run_experiment
from tools.proc.server import ServerDied, ServerError
from tools.repo.candidates import GitError
from tools.repo.target import Target

LaunchError = GitError | BuildError | ServerError | BenchError


def attempt(
    target: Target, spec: ExperimentSpec, out: Path, options: ExperimentOptions
) -> tuple[ExperimentResult | LaunchError, str | None]:
    """The result, or the error of the last attempt; and why a first attempt was discarded."""
    try:
        return run_experiment(target, spec, out, options), None
    except (GitError, BuildError, BenchError, ServerDied) as e:
        return e, None
    except ServerError as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
    out.rename(out.with_name(f"{out.name}-start-failed"))  # kept; the retry is new
    try:
        return run_experiment(target, spec, out, options), first
    except (GitError, BuildError, ServerError, BenchError) as e:
        return e, first
