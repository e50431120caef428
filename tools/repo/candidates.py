"""Candidates: every change between the good ref and the working tree, every env and arg difference.

A text hunk is a candidate; so is a whole-file change a hunk cannot say (a binary file, a mode
change, an empty file, a file turned symlink), as git's own patch for that file. What cannot be
a candidate (a submodule pointer) is carried as-is and named. debug-agent's own files are left out
by exact path (own_paths), never by a folder name a user may also use.

Hunk ids are stable: they hash the file and the hunk's own lines, so they survive other hunks
coming and going. Nothing here writes to the repository's index, working tree or refs.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import git
from pydantic import BaseModel, ConfigDict
from unidiff import PatchedFile, PatchSet
from unidiff.errors import UnidiffParseError

from tools.config import CONFIG_NAME, TargetConfig
from tools.errors import ToolError
from tools.folders import sessions_root, state_dir
from tools.repo.big_changes import BIG_BINARY, largest, too_big
from tools.repo.git_names import header_name, shown_name, submodule_change, unquote
from tools.repo.overlay import Overlay
from tools.repo.undecodable import binary_diff, holds_undecodable, undecodable_change
from tools.repo.worktree import (
    GitError,
    add_paths,
    excluding,
    literal,
    open_repo,
    resolve_ref,
    scratch_index,
    untracked_paths,
)

# `os.environ["NAME"] = "v"` and `os.environ.setdefault("NAME", "v")`
ENV_SET = re.compile(
    r"""os\.environ(?:\[\s*["'](\w+)["']\s*\]\s*=\s*|\.setdefault\(\s*["'](\w+)["']\s*,\s*)"""
    r"""["']([^"']*)["']"""
)

# a hunk's `@@ -a,b +c,d @@` line: the good file's range, the bad file's first line
_OLD_RANGE = re.compile(r"^@@ -(\d+)(?:,(\d+))?")
_NEW_START = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)")


class Candidate(BaseModel):
    """One change between the good reference and the bad state. Immutable: an investigation's
    state is copied at every step, and a release range holds thousands of these."""

    model_config = ConfigDict(frozen=True)

    id: str
    kind: Literal["hunk", "env", "arg", "package"]
    file: str | None = None
    header: str | None = None  # "@@ -a,b +c,d @@"; a whole-file change: "binary", "mode ..."
    added: int = 0
    removed: int = 0
    origin: str = ""  # "uncommitted", "untracked" or "committed after <good>"
    # a patch that applies this hunk alone to the good tree (git apply); for a whole-file change
    # (binary, mode, empty file, type change) git's own patch for the file, and `header` says which
    patch: str = ""
    name: str | None = None  # env: variable; arg: flag; package: distribution
    good: str | None = None  # env/arg/package value in the good reference (None: unset / absent)
    bad: str | None = None  # env/arg/package value in the bad state
    # package: the releases strictly between its good and bad versions, oldest first (None:
    # not known: no index or wheel folder to ask, or a URL at one end)
    releases: list[str] | None = None

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Candidate:
        return self  # frozen: a copy would be the same value

    def hunk_lines(self) -> list[str]:
        """The hunk as its patch holds it: the `@@` line, then the body (no file header lines);
        none for a whole-file change."""
        lines = self.patch.splitlines()
        at = next((i for i, line in enumerate(lines) if line.startswith("@@ ")), len(lines))
        return lines[at:]

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
    # what cannot be a candidate, one line each (path: what it is, what becomes of it); a carried
    # change is in every state built from the bad side, through carried_patch (git apply --index)
    carried: list[str] = []
    carried_patch: str = ""
    # the bad package set's pins, where a [stack] is under study (its changes are candidates)
    stack: dict[str, str] | None = None
    overlay: Overlay | None = None  # the candidates are a package's, inside a release

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


def _hunk_id(path: str, lines: list[str]) -> str:
    text = "\0".join([path, *lines]).encode("utf-8", "surrogateescape")  # a name not UTF-8
    digest = hashlib.sha1(text).hexdigest()[:6]
    return f"{shown_name(Path(path).stem)}-{digest}"


def own_paths(repo_root: Path, config_dir: Path | None = None) -> list[str]:
    """debug-agent's own files inside the repository, by exact path from its root: the config file
    (at the root, and where it was read from) and the state and sessions folders where they lie
    inside it (by default both live outside any repository under study: tools/folders.py)."""
    root = repo_root.resolve()
    mine = [root / CONFIG_NAME, state_dir(), sessions_root(Path.cwd(), root)]
    if config_dir is not None:
        mine.append(config_dir / CONFIG_NAME)
    inside = {path.resolve() for path in mine}
    return sorted(
        p.relative_to(root).as_posix() for p in inside if p.is_relative_to(root) and p != root
    )


def _changed_lines(patch: PatchSet) -> dict[str, set[str]]:
    """For each file, the lines a patch adds or removes (with their +/- sign)."""
    changed: dict[str, set[str]] = {}
    for pfile in patch:
        lines = changed.setdefault(unquote(pfile.path), set())
        for hunk in pfile:
            lines.update(str(line) for line in hunk if line.is_added or line.is_removed)
    return changed


def _parse(text: str, against: str) -> PatchSet:
    try:
        return PatchSet(text)
    except UnidiffParseError as e:
        raise GitError(f"cannot read the diff against {against}: {e}") from None


def _diff(repo: git.Repo, *args: str) -> str:
    return repo.git.diff("--no-renames", "--no-color", *args, strip_newline_in_stdout=False)


# origin of a change: given a hunk's changed lines, or None for a whole-file change
Origin = Callable[[set[str] | None], str]


def tree_changes(repo: git.Repo, good: str, own: Sequence[str] = (CONFIG_NAME,)) -> CandidateSet:
    """Every change from `good` to the working tree, untracked files included, `own` paths left
    out: candidates, and what is carried. Untracked files enter a scratch copy of the index
    (intent to add), so one diff shows them as git shows any new file: symlinks, modes, binary."""
    good_sha = resolve_ref(repo, good)
    listed, lost = untracked_paths(repo.git, own)
    skip = excluding([*own, *lost])
    untracked = set(listed)
    found = CandidateSet(
        repo=str(repo.working_tree_dir),
        good=good,
        good_sha=good_sha,
        candidates=[],
        carried=[
            f"{p}: a git repository with no commit inside the tree: no git tree can hold it, "
            "so no state has it"
            for p in lost
        ],
    )
    with scratch_index(repo):  # where a file's changes git hides are shown too
        uncommitted = _changed_lines(_parse(_diff(repo, "HEAD"), "HEAD"))
        add_paths(repo.git, listed, "--intent-to-add")
        text = _diff(repo, good_sha, "-U3", "--", ".", *skip)
        by_path: dict[str, list[PatchedFile]] = {}
        for pfile in _parse(text, good):
            by_path.setdefault(unquote(pfile.path), []).append(pfile)
        for path, pfiles in by_path.items():

            def origin(lines: set[str] | None, path: str = path) -> str:
                if path in untracked:
                    return "untracked"
                if path in uncommitted and (lines is None or lines & uncommitted[path]):
                    return "uncommitted"
                return f"committed after {good}"

            _add_file(repo, good_sha, path, pfiles, origin, found)
    # in the order they always came: tracked files first, then untracked ones
    found.candidates.sort(key=lambda c: c.origin == "untracked")
    return found


def commit_changes(
    repo: git.Repo, low: str, high: str, own: Sequence[str] = (CONFIG_NAME,)
) -> CandidateSet:
    """Every change from commit `low` to commit `high` (the hunks of one commit, or of a few
    that must be searched together), `own` paths left out: built on `low`, they give `high`."""
    low_sha, high_sha = resolve_ref(repo, low), resolve_ref(repo, high)
    found = CandidateSet(repo=str(repo.working_tree_dir), good=low, good_sha=low_sha, candidates=[])
    text = _diff(repo, low_sha, high_sha, "-U3", "--", ".", *excluding(own))
    by_path: dict[str, list[PatchedFile]] = {}
    for pfile in _parse(text, low):
        by_path.setdefault(unquote(pfile.path), []).append(pfile)
    for path, pfiles in by_path.items():
        _add_file(repo, low_sha, path, pfiles, lambda _: f"commit {high_sha[:8]}", found, high_sha)
    return found


def hunk_candidates(
    repo: git.Repo, good: str, own: Sequence[str] = (CONFIG_NAME,)
) -> tuple[str, list[Candidate]]:
    found = tree_changes(repo, good, own)
    return found.good_sha, found.candidates


_MODE_LINES = ("old mode ", "new mode ", "new file mode ", "deleted file mode ")


def _add_file(
    repo: git.Repo,
    good_sha: str,
    path: str,
    pfiles: list[PatchedFile],
    origin: Origin,
    found: CandidateSet,
    to: str | None = None,
) -> None:
    """One file's change into `found`: its hunks, a whole-file candidate, or a carried line
    (`to`: the commit changed to; None: the working tree)."""
    info = [line for pfile in pfiles for line in str(pfile.patch_info or "").splitlines()]
    if any(line.endswith(" 160000") for line in info):
        rows = [str(line) for pfile in pfiles for hunk in pfile for line in hunk]
        note, moved = submodule_change(path, rows)
        found.carried.append(note)
        if moved:  # git apply knows no "-dirty": the pointer is the commit
            found.carried_patch += "".join(map(str, pfiles)).replace("-dirty\n", "\n")
        return
    modes = [line for line in info if line.startswith(_MODE_LINES)]
    binary = any(pfile.is_binary_file for pfile in pfiles)
    undecodable = not binary and undecodable_change(pfiles)
    if (binary or undecodable) and (size := largest(repo, good_sha, path, to)) > BIG_BINARY:
        found.carried.append(too_big(path, f"a binary file of {size:,} bytes"))
        return
    if not binary and (size := sum(len(str(pfile)) for pfile in pfiles)) > BIG_BINARY:
        # a data literal of 20 MB: copied into every state and checkpoint, it took a run from
        # 7 s to 3 minutes and 2.8 GB
        found.carried.append(too_big(path, f"a change of {size:,} characters of diff"))
        return
    if binary or undecodable or len(pfiles) > 1 or not len(pfiles[0]):  # no hunk can say it
        sides = [good_sha, *([to] if to else []), "--", *literal([path])]
        raw = binary_diff(repo, *sides) if undecodable else _diff(repo, "--binary", *sides)
        if holds_undecodable(raw):  # its .gitattributes name a diff driver: git keeps it text
            found.carried.append(f"{path}: not UTF-8 text, and no binary patch: in no state")
            return
        header = "; ".join(["binary"] * binary + ["not UTF-8"] * undecodable + modes)
        found.candidates.append(_whole_file(path, raw, header or "whole file", origin(None)))
        return
    git_line = next(line for line in info if line.startswith("diff --git "))
    if any(line.startswith("old mode ") for line in modes):
        header = " -> ".join(line.split()[-1] for line in modes)
        patch = "".join(f"{line}\n" for line in [git_line, *modes])
        found.candidates.append(_whole_file(path, patch, f"mode {header}", origin(None)))
    # every patch opens with git's own line, so that joined ones never run into each other; a
    # new or deleted file says its mode (a symlink or an executable stays one)
    created = [line for line in modes if "file mode" in line]
    prefix = "".join(f"{line}\n" for line in [git_line, *created])
    found.candidates += _hunks(path, pfiles[0], prefix, origin)


def _whole_file(path: str, patch: str, header: str, origin: str) -> Candidate:
    """A change of a whole file as one candidate; its id hashes git's patch past the names."""
    lines = patch.splitlines()[1:]
    return Candidate(
        id=_hunk_id(path, lines),
        kind="hunk",
        file=shown_name(path),
        header=header,
        patch=patch,
        origin=origin,
    )


def _hunks(path: str, pfile: PatchedFile, prefix: str, origin: Origin) -> list[Candidate]:
    # git's own header says whether the file is created or deleted: unidiff takes a file
    # emptied to its last line (it stays, empty) for a deleted one
    source = header_name("a/", None if "new file mode" in prefix else path)
    target = header_name("b/", None if "deleted file mode" in prefix else path)
    found = []
    for hunk in pfile:
        body = [str(line) for line in hunk]
        header = (
            f"@@ -{hunk.source_start},{hunk.source_length} "
            f"+{hunk.target_start},{hunk.target_length} @@"
        )
        one = (
            f"{prefix}--- {source}\n+++ {target}\n{header}{hunk.section_header and ' '}"
            f"{hunk.section_header}\n{''.join(body)}"
        )
        found.append(
            Candidate(
                id=_hunk_id(path, body),
                kind="hunk",
                file=shown_name(path),
                header=header,
                added=hunk.added,
                removed=hunk.removed,
                patch=one,
                origin=origin({str(x) for x in hunk if x.is_added or x.is_removed}),
            )
        )
    return found


def list_candidates(
    repo_dir: Path, config: TargetConfig, config_dir: Path | None = None
) -> CandidateSet:
    """`config_dir`: where debug-agent.toml was read from (default: `repo_dir`)."""
    from tools.repo.config_candidates import config_candidates  # it builds on Candidate

    repo = open_repo(repo_dir)
    own = own_paths(Path(str(repo.working_tree_dir)), config_dir or repo_dir)
    found = tree_changes(repo, config.target.good, own)
    found.candidates += config_candidates(config)
    if config.stack is not None:
        from tools.stack.candidates import bad_pins, sources, stack_candidates, stack_sets

        folder = config_dir or repo_dir
        good, bad = stack_sets(config, folder)
        where = sources(config.stack, folder)
        found.candidates += stack_candidates(good, bad, f"{good.source} vs {bad.source}", where)
        found.stack = bad_pins(bad)
    return found
