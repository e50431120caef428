"""One controlled experiment: a state built from candidates, launched, benchmarked, stopped.

The state starts from the bad side (working tree, [launch]) with `--revert` candidates undone,
or from the good side (good ref, [baseline]) with `--apply` candidates added. It is built in a
scratch worktree; the user's repository is only read.
"""

from __future__ import annotations

import os
import shlex
import statistics
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from tools.argv import set_option
from tools.bench.serving import Metric, RequestSample
from tools.build_step import build
from tools.config import TargetConfig
from tools.errors import ToolError
from tools.gpu.info import GpuInfo, query_gpu
from tools.measure import LaunchPlan, Measurement, measure
from tools.node.nodes import Node, open_node
from tools.node.ssh_host import HostLost
from tools.proc.import_trace import PROFILE_INTERVAL_VAR, PROFILE_VAR, ImportTrace, build_env
from tools.proc.worker_env import WorkerEnv, after_start
from tools.profile.around_bench import AroundBench
from tools.progress import Progress
from tools.repo.candidates import Candidate, CandidateSet
from tools.repo.overlay import Overlay
from tools.repo.target import Target
from tools.repo.worktree import scratch_worktree
from tools.secrets import mask_files
from tools.stack.candidates import state_pins
from tools.stack.environment import BuiltEnvironment
from tools.stack.launch_env import state_environment
from tools.stack.loaded import loaded_distributions


class ExperimentSpec(BaseModel):
    """The tree and launch under test: a base side, with candidates reverted from the bad
    side or applied to the good side, plus extra env and server args."""

    base: Literal["bad", "good"] | None = None  # default: good when anything is applied
    reverted: list[str] = Field(default_factory=list)
    applied: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)  # extra env on top of the state's
    args: list[str] = Field(default_factory=list)  # extra server args, appended
    # a tree that existed: this commit checked out as it is, launched as the bad side is
    # ([launch]); with it, nothing is reverted or applied (a bisection's probe)
    commit: str | None = None
    # [stack]: packages pinned otherwise on top of the state's set (a release search's probe)
    pins: dict[str, str] = Field(default_factory=dict)


class MetricSummary(BaseModel):
    name: str
    unit: str
    median: float
    samples: list[float]


class ExperimentResult(BaseModel):
    # `spec` is written and read as "config" (the key every JSON result has always had)
    model_config = ConfigDict(
        validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )

    spec: ExperimentSpec = Field(alias="config")
    metric: MetricSummary
    metrics: dict[str, Metric]
    launches: int
    log: str
    logs: list[str]
    hunks: list[str]  # ids of the hunks in the tested tree
    good_sha: str
    samples: list[RequestSample]
    worker_env: WorkerEnv  # of the last launch
    model_info: dict | None = None
    import_trace: ImportTrace | None = None  # with trace=True: what the processes loaded
    gpu: GpuInfo | None = None  # with trace=True: what nvidia-smi / ROCm says on the node
    retried: str | None = None  # why a first attempt was discarded (a dropped connection)
    wall_s: float
    environment: BuiltEnvironment | None = None  # a [stack]'s state: its environment


class _State(BaseModel):
    hunks: list[Candidate]
    env: dict[str, str]
    command: str  # the launch command line template
    flags: dict[str, str | None]  # server args set (or removed, None) on top of it
    extra_args: list[str]
    tree_sha: str  # the commit the scratch tree starts from (the patches go on top)
    carried: str = ""  # what the bad side carries as-is (CandidateSet.carried_patch)
    pins: dict[str, str] | None = None  # its package set, where a [stack] is under study
    overlay: Overlay | None = None  # the hunks are a package's: they go to its own tree
    package_commit: str | None = None  # the package's tree is this commit's (a probe)

    def tree_patches(self) -> list[str]:
        """What goes on `tree_sha` for the target's own tree."""
        if self.overlay is not None:
            return self.overlay.tree_patches
        return [h.patch for h in self.hunks] + [p for p in [self.carried] if p]

    def argv(self, argv: list[str]) -> list[str]:
        for flag, value in self.flags.items():
            argv = set_option(argv, flag, value)
        return argv + [a for extra in self.extra_args for a in shlex.split(extra)]


def _state(config: TargetConfig, cands: CandidateSet, spec: ExperimentSpec) -> _State:
    if spec.reverted and spec.applied:
        raise ToolError(
            "use --revert (start from the bad state) or --apply (start from the "
            "good state), not both"
        )
    if spec.commit is not None:
        if spec.reverted or spec.applied:
            raise ToolError("a commit's tree is launched as it is: no --revert or --apply")
        overlay = cands.overlay  # inside a package's release: the commit is the package's
        return _State(
            hunks=[],
            env={**config.launch.env, **spec.env},
            command=config.launch.command,
            flags={},
            extra_args=spec.args,
            tree_sha=overlay.tree_sha if overlay else spec.commit,
            pins=cands.stack,
            overlay=overlay,
            package_commit=spec.commit if overlay else None,
        )
    from_good = spec.base == "good" if spec.base else bool(spec.applied)
    chosen = cands.by_id(spec.applied if from_good else spec.reverted)
    chosen_ids = {c.id for c in chosen}
    hunks = [
        c
        for c in cands.candidates
        if c.kind == "hunk" and ((c.id in chosen_ids) if from_good else (c.id not in chosen_ids))
    ]
    good_env = config.baseline.env if config.baseline.env is not None else config.launch.env
    env = dict(good_env if from_good else config.launch.env)
    flags: dict[str, str | None] = {}
    for c in chosen:
        value = c.bad if from_good else c.good
        if c.kind == "env":
            env.pop(c.name or "", None)
            if value is not None:
                env[c.name or ""] = value
        elif c.kind == "arg":
            flags[c.name or ""] = value
    env.update(spec.env)
    pins = None
    if cands.stack is not None:  # packages not held are at their good pins
        packages = [c for c in cands.candidates if c.kind == "package"]
        not_held = [c for c in packages if (c.id in chosen_ids) != from_good]
        pins = state_pins(cands.stack, not_held) | spec.pins
    command = config.launch.command
    if from_good and config.baseline.command:
        command = config.baseline.command
    return _State(
        hunks=hunks,
        env=env,
        command=command,
        flags=flags,
        extra_args=spec.args,
        tree_sha=cands.overlay.tree_sha if cands.overlay else cands.good_sha,
        carried="" if from_good else cands.carried_patch,
        pins=pins,
        overlay=cands.overlay,
    )


# Each launch's name (its folder and number) reaches the server: a simulated target can seed its
# noise with it, so that an investigation replays launch for launch (the lab does).
LAUNCH_ENV = "DEBUG_AGENT_LAUNCH"


@dataclass(frozen=True)
class ExperimentOptions:
    """How an experiment measures its state (which state: the ExperimentSpec)."""

    metric: str | None = None  # the one reported (default: verify_ms where measured, else tok_s)
    requests: int | None = None  # benchmark requests per launch (default: [bench] requests)
    launches: int = 1  # replicates
    trace: bool = False  # also: what the processes imported, what the node's GPU is
    progress: Progress | None = None


def run_experiment(
    target: Target,
    spec: ExperimentSpec,
    out_dir: Path,
    options: ExperimentOptions | None = None,
) -> ExperimentResult:
    """Build the state in a scratch worktree, launch and bench it `options.launches` times,
    clean up.

    On a remote node, a connection lost mid-experiment discards it (nothing of it is counted;
    the node's supervisor stops what it ran) and it is run once more on a new connection.
    """
    options = options or ExperimentOptions()
    try:
        return _run(target, spec, out_dir, options)
    except HostLost as e:
        why = f"first attempt discarded: {e}"
        (out_dir / "retried.txt").write_text(why + "\n")
    try:
        result = _run(target, spec, out_dir, options)
    except HostLost as e:
        raise HostLost(f"{e} (twice; the experiment was not counted)") from None
    return result.model_copy(update={"retried": why})


class _Launched(NamedTuple):
    measured: list[Measurement]
    logs: list[str]
    imports: ImportTrace | None
    gpu: GpuInfo | None
    environment: BuiltEnvironment | None


def _run(
    target: Target, spec: ExperimentSpec, out_dir: Path, options: ExperimentOptions
) -> ExperimentResult:
    start = time.monotonic()
    state = _state(target.config, target.cands, spec)
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        launched = _launch(target, state, out_dir, options)
    finally:
        mask_files(out_dir)  # what the server printed stays, its secrets do not
    measured = launched.measured
    pooled = _pool([m.bench.metrics for m in measured])
    metric = _metric(options.metric, pooled)
    chosen = pooled[metric]
    return ExperimentResult(
        spec=spec,
        metric=MetricSummary(
            name=metric, unit=chosen.unit, median=chosen.median, samples=chosen.samples
        ),
        metrics=pooled,
        launches=options.launches,
        log=launched.logs[-1],
        logs=launched.logs,
        hunks=[h.id for h in state.hunks],
        good_sha=target.cands.good_sha,
        samples=[s for m in measured for s in m.bench.samples],
        worker_env=measured[-1].worker_env,
        model_info=measured[-1].model_info,
        import_trace=launched.imports,
        gpu=launched.gpu,
        wall_s=time.monotonic() - start,
        environment=launched.environment,
    )


def _launch(target: Target, state: _State, out_dir: Path, options: ExperimentOptions) -> _Launched:
    """The state's tree on the node, launched and benched `options.launches` times."""
    config, trace = target.config, options.trace
    measured, logs = [], []
    with (
        open_node(config, target.config_dir, out_dir) as node,
        node.worktree(state.tree_sha, state.tree_patches(), out_dir / "state.patch") as tree,
        package_tree(state, target.cands.good_sha, out_dir) as package,
    ):
        environment = _stack_state(target, state, node, package, out_dir)
        cwd = tree / node.subdir
        env = node.traced_env(_profiled(state.env, config), cwd) if trace else state.env
        changed = {c.file for c in target.cands.candidates if c.file}
        around = AroundBench(node, config.profile) if trace else None
        # which changed data files the launch reads; the changed .py files, which the import
        # trace shows loaded or not, check that the watch sees the launch's opens at all
        with node.watch_opens(tree, changed if trace else []) as opens:
            build(config, node, cwd, build_env(env), out_dir / "build.log")  # on the path too
            for i in range(options.launches):
                log = out_dir / f"server-{i + 1}.log"
                logs.append(str(log))
                plan = LaunchPlan(
                    command=state.command,
                    transform_argv=state.argv,
                    env={**env, LAUNCH_ENV: f"{out_dir.name}-{i + 1}"},
                    watch_env=env_names(target.cands),
                    requests=options.requests,
                    before_bench=around.bench_begins if around else None,
                    before_stop=around.bench_ended if around else None,
                )
                measured.append(measure(config, node, cwd, log, plan, options.progress))
            opened = opens.trace()
        imports = (
            node.read_trace(tree, changed, copies=not config.build.command).model_copy(
                update={"opens": opened, "kernels_refused": around and around.torch_refused}
            )
            if trace
            else None
        )
        if imports is not None and environment is not None:  # which packages ran at all
            imports.distributions = loaded_distributions(
                out_dir / "imports", node.distributions(environment), not config.host
            )
        if trace:  # what each process set in its own os.environ after it started
            last = measured[-1]
            measured[-1] = last.model_copy(
                update={"worker_env": after_start(last.worker_env, out_dir / "imports")}
            )
        gpu = (
            query_gpu(
                lambda command: node.shell(command, cwd, {}, 20.0),
                "the node" if config.host else "this machine",
            )
            if trace
            else None
        )
    return _Launched(measured, logs, imports, gpu, environment)


def _profiled(env: dict[str, str], config: TargetConfig) -> dict[str, str]:
    """A traced launch's env with the sampling profiler on or off, as [profile] says."""
    on = "1" if config.profile.enabled else "0"
    return {**env, PROFILE_VAR: on, PROFILE_INTERVAL_VAR: str(config.profile.interval_ms)}


def _stack_state(
    target: Target, state: _State, node: Node, package: Path | None, out_dir: Path
) -> BuiltEnvironment | None:
    """Where a [stack] is under study: the package's patched files in front of its installed
    copy, and {python} the state's own environment (built on the node, once)."""
    if package is not None:
        root = package / state.overlay.root if state.overlay else package
        state.env["PYTHONPATH"] = os.pathsep.join(
            filter(None, (str(node.place(root)), state.env.get("PYTHONPATH")))
        )
    if state.pins is None:
        return None
    environment = state_environment(target, state.pins, out_dir, node)
    node.python = environment.python
    return environment


def package_tree(state: _State, base: str, out_dir: Path) -> AbstractContextManager[Path | None]:
    """A scratch tree of the package's releases at `base` with the state's hunks, or none."""
    if state.overlay is None:
        return nullcontext(None)
    patches = [h.patch for h in state.hunks]
    base = state.package_commit or base
    return scratch_worktree(Path(state.overlay.repo), base, patches, out_dir / "package.patch")


def _metric(wanted: str | None, pooled: dict[str, Metric]) -> str:
    """The metric to report: the one asked for, else the speculative cycle when there is one,
    else throughput."""
    if wanted is None:
        wanted = next((m for m in ("verify_ms", "tok_s") if m in pooled), next(iter(pooled)))
    if wanted not in pooled:
        raise ToolError(
            f"the benchmark did not measure {wanted!r}; it measured: {', '.join(sorted(pooled))}"
        )
    return wanted


def env_names(cands: CandidateSet) -> frozenset[str]:
    """Every variable a candidate is about: the workers' environment must record them."""
    return frozenset(
        {c.name for c in cands.candidates if c.kind == "env" and c.name}
        | {name for c in cands.candidates for name, _ in c.env_assignments()}
    )


def _pool(per_launch: list[dict[str, Metric]]) -> dict[str, Metric]:
    """One metric per name over all launches (their samples concatenated)."""
    pooled: dict[str, Metric] = {}
    for name in per_launch[0]:
        values = [v for metrics in per_launch for v in metrics[name].samples]
        first = per_launch[0][name]
        pooled[name] = Metric(
            name=name,
            unit=first.unit,
            median=statistics.median(values),
            mean=statistics.fmean(values),
            samples=values,
            source=first.source,
        )
    return pooled
