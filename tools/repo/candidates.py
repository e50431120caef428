"""Candidates: every hunk between the good ref and the working tree, every env and arg difference.

Hunk ids are stable: they hash the file and the hunk's own lines, so they survive other hunks
coming and going. Nothing here writes to the repository.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from pathlib import Path
from typing import Literal

import git
from pydantic import BaseModel
from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from tools.config import CONFIG_NAME, TargetConfig
from tools.errors import ToolError
from tools.repo.git_names import header_name, unquote

# untracked paths that belong to debug-agent, not to the change under study
OWN_PATHS = (CONFIG_NAME, ".debug-agent", "sessions/")


# `os.environ["NAME"] = "v"` and `os.environ.setdefault("NAME", "v")`
ENV_SET = re.compile(
    r"""os\.environ(?:\[\s*["'](\w+)["']\s*\]\s*=\s*|\.setdefault\(\s*["'](\w+)["']\s*,\s*)"""
    r"""["']([^"']*)["']"""
)

# a hunk's `@@ -a,b +c,d @@` line: the good file's range, the bad file's first line
_OLD_RANGE = re.compile(r"^@@ -(\d+)(?:,(\d+))?")
_NEW_START = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)")


class GitError(ToolError):
    pass


class Candidate(BaseModel):
    id: str
    kind: Literal["hunk", "env", "arg"]
    file: str | None = None
    header: str | None = None  # "@@ -a,b +c,d @@"
    added: int = 0
    removed: int = 0
    origin: str = ""  # "uncommitted", "untracked" or "committed after <good>"
    patch: str = ""  # a patch that applies this hunk alone to the good tree (git apply)
    name: str | None = None  # env: variable; arg: flag
    good: str | None = None  # env/arg value in the good reference (None: unset / absent)
    bad: str | None = None  # env/arg value in the bad state

    def hunk_lines(self) -> list[str]:
        """The hunk as its patch holds it: the `@@` line, then the body (no file header lines)."""
        return self.patch.splitlines()[2:]

    def body_lines(self) -> list[str]:
        """The hunk's rows after its `@@` line, each with its marker (' ', '+' or '-')."""
        return self.hunk_lines()[1:]

    def added_lines(self) -> list[str]:
        """The lines this hunk adds (without their '+')."""
        return [row[1:] for row in self.body_lines() if row.startswith("+")]

    def removed_lines(self) -> list[str]:
        """The lines this hunk removes (without their '-')."""
        return [row[1:] for row in self.body_lines() if row.startswith("-")]

    def changed_lines(self) -> list[str]:
        """The lines this hunk adds or removes, in patch order (without their '+'/'-')."""
        return [row[1:] for row in self.body_lines() if row.startswith(("+", "-"))]

    def new_lines(self) -> list[str]:
        """The hunk's lines as the bad file has them: context and added (without marker)."""
        return [row[1:] for row in self.body_lines() if row.startswith((" ", "+"))]

    def old_range(self) -> tuple[int, int] | None:
        """(first line, line count) the hunk covers in the good file, from its `@@` line (a
        count left out is 1); None without one."""
        match = _OLD_RANGE.search(self.header or "")
        if not match:
            return None
        return int(match.group(1)), int(match.group(2)) if match.group(2) is not None else 1

    def new_start(self) -> int | None:
        """The first line the hunk covers in the bad file, from its `@@` line; None without one."""
        match = _NEW_START.search(self.header or "")
        return int(match.group(1)) if match else None

    def env_assignments(self) -> list[tuple[str, str]]:
        """(NAME, value) pairs this hunk's added lines put into os.environ."""
        return [
            (m.group(1) or m.group(2), m.group(3))
            for line in self.added_lines()
            for m in ENV_SET.finditer(line)
        ]

    def summary(self) -> dict:
        keys = ["id", "kind", "file", "header", "added", "removed", "origin", "name", "good", "bad"]
        return {k: v for k, v in self.model_dump(include=set(keys)).items() if v is not None}


class CandidateSet(BaseModel):
    repo: str
    good: str  # the ref as given
    good_sha: str
    candidates: list[Candidate]

    def by_id(self, ids: list[str]) -> list[Candidate]:
        """Look ids up (a unique prefix is enough); unknown ids are one clear error."""
        found = []
        for wanted in ids:
            exact = [c for c in self.candidates if c.id == wanted]
            matches = exact or [c for c in self.candidates if c.id.startswith(wanted)]
            if len(matches) != 1:
                what = "unknown" if not matches else "ambiguous"
                known = ", ".join(c.id for c in self.candidates)
                raise ToolError(f"{what} candidate id {wanted!r} (known: {known})")
            found.append(matches[0])
        return found


def open_repo(path: Path) -> git.Repo:
    if path.exists() and not path.is_dir():
        raise GitError(f"{path} is a file, not the folder of a git repository")
    try:
        repo = git.Repo(path, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError(f"{path} is not a git repository") from None
    # no opportunistic index refresh: reading must not rewrite the user's index
    repo.git.update_environment(GIT_OPTIONAL_LOCKS="0")
    return repo


def resolve_ref(repo: git.Repo, ref: str) -> str:
    try:
        return repo.git.rev_parse("--verify", "--quiet", f"{ref}^{{commit}}")
    except git.GitCommandError:
        raise GitError(f"unknown git ref {ref!r} in {repo.working_tree_dir}") from None


def _hunk_id(path: str, lines: list[str]) -> str:
    digest = hashlib.sha1(("\0".join([path, *lines])).encode()).hexdigest()[:6]
    return f"{Path(path).stem}-{digest}"


def _untracked_patches(repo: git.Repo) -> str:
    """New files git does not know yet, as `git diff` would show them once added."""
    patches = []
    for path in untracked_paths(repo):
        if not path or path.startswith(OWN_PATHS):
            continue
        # --no-index exits 1 when the files differ, which they always do here
        _, out, _ = repo.git.diff(
            "--no-index",
            "--no-color",
            "--",
            "/dev/null",
            path,
            with_extended_output=True,
            with_exceptions=False,
            strip_newline_in_stdout=False,
        )
        patches.append(out)
    return "".join(patches)


def untracked_paths(repo: git.Repo) -> list[str]:
    """New files git does not know yet, NUL-separated: any name survives (spaces, newlines)."""
    listed = repo.git.ls_files(
        "-z", "--others", "--exclude-standard", strip_newline_in_stdout=False
    )
    return [p for p in listed.split("\0") if p]


def _diff_text(repo: git.Repo, good_sha: str) -> str:
    tracked = repo.git.diff(
        good_sha,
        "--no-renames",
        "--no-color",
        "-U3",
        "--",
        ".",
        *[f":(exclude){p}" for p in OWN_PATHS],
        strip_newline_in_stdout=False,
    )
    return tracked + _untracked_patches(repo)


def _changed_lines(patch: PatchSet) -> dict[str, set[str]]:
    """For each file, the lines a patch adds or removes (with their +/- sign)."""
    changed: dict[str, set[str]] = {}
    for pfile in patch:
        for hunk in pfile:
            changed.setdefault(unquote(pfile.path), set()).update(
                str(line) for line in hunk if line.is_added or line.is_removed
            )
    return changed


def _origin(
    path: str, lines: set[str], uncommitted: dict[str, set[str]], untracked: set[str], good: str
) -> str:
    if path in untracked:
        return "untracked"
    if lines & uncommitted.get(path, set()):
        return "uncommitted"
    return f"committed after {good}"


def hunk_candidates(repo: git.Repo, good: str) -> tuple[str, list[Candidate]]:
    good_sha = resolve_ref(repo, good)
    text = _diff_text(repo, good_sha)
    try:
        patch = PatchSet(text)
    except UnidiffParseError as e:
        raise GitError(f"cannot read the diff against {good}: {e}") from None
    uncommitted = _changed_lines(
        PatchSet(repo.git.diff("HEAD", "--no-renames", "--no-color", strip_newline_in_stdout=False))
    )
    untracked = set(untracked_paths(repo))
    candidates = []
    for pfile in patch:
        if pfile.is_binary_file:
            continue
        path = unquote(pfile.path)
        source = header_name("a/", None if pfile.is_added_file else path)
        target = header_name("b/", None if pfile.is_removed_file else path)
        for hunk in pfile:
            body = [str(line) for line in hunk]
            header = (
                f"@@ -{hunk.source_start},{hunk.source_length} "
                f"+{hunk.target_start},{hunk.target_length} @@"
            )
            one = (
                f"--- {source}\n+++ {target}\n{header}{hunk.section_header and ' '}"
                f"{hunk.section_header}\n{''.join(body)}"
            )
            candidates.append(
                Candidate(
                    id=_hunk_id(path, body),
                    kind="hunk",
                    file=path,
                    header=header,
                    added=hunk.added,
                    removed=hunk.removed,
                    patch=one,
                    origin=_origin(
                        path,
                        {str(x) for x in hunk if x.is_added or x.is_removed},
                        uncommitted,
                        untracked,
                        good,
                    ),
                )
            )
    return good_sha, candidates


def _arg_pairs(command: str) -> dict[str, str | None]:
    """--flag value / --flag=value / --switch, by flag (the last one wins, as argparse does)."""
    argv = shlex.split(command)
    pairs: dict[str, str | None] = {}
    for i, arg in enumerate(argv):
        if not arg.startswith("--"):
            continue
        if "=" in arg:
            flag, value = arg.split("=", 1)
            pairs[flag] = value
        else:
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            pairs[arg] = nxt if nxt is not None and not nxt.startswith("--") else None
    return pairs


def config_candidates(config: TargetConfig) -> list[Candidate]:
    """Env vars and server args where the bad launch differs from the good baseline."""
    found = []
    good_env = config.baseline.env if config.baseline.env is not None else config.launch.env
    for name in sorted(set(good_env) | set(config.launch.env)):
        good, bad = good_env.get(name), config.launch.env.get(name)
        if good != bad:
            found.append(
                Candidate(
                    id=f"env-{name}",
                    kind="env",
                    name=name,
                    good=good,
                    bad=bad,
                    origin="[launch] env vs [baseline] env",
                )
            )
    if config.baseline.command:
        good_args = _arg_pairs(config.baseline.command)
        bad_args = _arg_pairs(config.launch.command)
        for flag in sorted(set(good_args) | set(bad_args)):
            if flag == "--port":
                continue
            in_good, in_bad = flag in good_args, flag in bad_args
            good, bad = good_args.get(flag), bad_args.get(flag)
            if in_good != in_bad or good != bad:
                found.append(
                    Candidate(
                        id=f"arg-{flag.lstrip('-')}",
                        kind="arg",
                        name=flag,
                        good=(good or "") if in_good else None,
                        bad=(bad or "") if in_bad else None,
                        origin="[launch] command vs [baseline] command",
                    )
                )
    return found


def list_candidates(repo_dir: Path, config: TargetConfig) -> CandidateSet:
    repo = open_repo(repo_dir)
    good_sha, hunks = hunk_candidates(repo, config.target.good)
    return CandidateSet(
        repo=str(repo.working_tree_dir),
        good=config.target.good,
        good_sha=good_sha,
        candidates=hunks + config_candidates(config),
    )
