"""Benchmark: the work before the first launch on a long commit range.

    python tests/bench_range.py [--commits 500] [--modules 100] [--seed 1]

Builds a synthetic package (MODULES modules of 40 functions each) and a history of COMMITS
commits after the tag `good`, each editing one to three functions in one to three modules,
then times what an investigation does before its first launch: the candidates (the diff
against good), the links read from the code (definitions, imports, compile ties), the tree
check, the hunks' commits and the search's first split. Prints one line per step and the
total; nothing is asserted (speed goals live here, not in the tests).
"""

from __future__ import annotations

import argparse
import random
import subprocess
import tempfile
import time
from pathlib import Path

import git

from agent.phases.commit_split import describe
from agent.phases.search import split
from agent.state import InvestigationState
from tools.code_paths.dependencies import dependencies
from tools.repo.candidates import tree_changes
from tools.repo.commit_groups import commit_groups
from tools.repo.tree_check import check_tree

FUNCTIONS = 40


def _module(index: int, bodies: dict[int, str]) -> str:
    parts = [f'"""Module {index}."""\n\nfrom __future__ import annotations\n\nimport math\n']
    for f in range(FUNCTIONS):
        body = bodies.get(f, f"    return math.sqrt(x + {f})")
        parts.append(f"\n\ndef func_{index}_{f}(x):\n    y = x * 2\n    y += 1\n{body}\n")
    return "".join(parts)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def build(repo: Path, commits: int, modules: int, seed: int) -> None:
    rng = random.Random(seed)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "bench@example.invalid")
    _git(repo, "config", "user.name", "bench")
    package = repo / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    bodies: list[dict[int, str]] = [{} for _ in range(modules)]
    for m in range(modules):
        (package / f"mod_{m}.py").write_text(_module(m, bodies[m]))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "good")
    _git(repo, "tag", "good")
    for n in range(commits):
        for m in rng.sample(range(modules), rng.randint(1, 3)):
            for f in rng.sample(range(FUNCTIONS), rng.randint(1, 3)):
                bodies[m][f] = f"    return math.sqrt(x + {f}) * {n + 2}"
            (package / f"mod_{m}.py").write_text(_module(m, bodies[m]))
        _git(repo, "commit", "-qam", f"change {n} (#{1000 + n})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=500)
    parser.add_argument("--modules", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-range-") as folder:
        repo_dir = Path(folder)
        started = time.perf_counter()
        build(repo_dir, args.commits, args.modules, args.seed)
        print(f"history: {args.commits} commits built in {time.perf_counter() - started:.1f} s")
        repo = git.Repo(repo_dir)
        times = {}
        started = time.perf_counter()
        found = tree_changes(repo, "good")
        good_sha, candidates = found.good_sha, found.candidates
        times["candidates"] = time.perf_counter() - started
        files = sorted({c.file for c in candidates if c.file})
        started = time.perf_counter()
        good = {p: repo.git.show(f"{good_sha}:{p}") for p in files}
        bad = {p: (repo_dir / p).read_text() for p in files}
        links = dependencies(candidates, good, bad).links
        times["links"] = time.perf_counter() - started
        started = time.perf_counter()
        check = check_tree(repo_dir, found, ("debug-agent.toml",))
        times["tree check"] = time.perf_counter() - started
        started = time.perf_counter()
        groups = commit_groups(repo, good_sha, candidates)
        times["commit groups"] = time.perf_counter() - started
        started = time.perf_counter()
        state = InvestigationState.model_construct(
            candidates=candidates, commits=groups, links=links, hypotheses={}
        )
        later, earlier = split(state, [c.id for c in candidates])
        times["first split"] = time.perf_counter() - started
        print(f"{len(candidates)} hunks in {len(files)} files, {len(links)} links, tree {check.ok}")
        print(
            f"{len(groups.commits)} commits; the first probe reverts {len(later)} hunks of "
            f"{describe(state, later)}"
        )
        for step, seconds in times.items():
            print(f"{step:>12}: {seconds:6.2f} s")
        print(f"{'total':>12}: {sum(times.values()):6.2f} s")


if __name__ == "__main__":
    main()
