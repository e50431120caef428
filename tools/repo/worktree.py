"""Git beside the user's own state: the repository opened so that reading never rewrites its
index, a scratch copy of that index, and scratch worktrees (one per experiment, holding the good
tree plus chosen hunks).

The user's working tree, index, stash and refs are never written: a detached worktree has its
own HEAD and index. Each worktree is locked with the owner's pid, so a later start can tell a
crashed run's leftovers from a live run's and remove them.

Every git command of ours runs isolated from the user's setup (git_isolation.py).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import git
import psutil
from pydantic import BaseModel

from tools.errors import ToolError
from tools.repo.git_failure import git_said
from tools.repo.git_isolation import isolation, scratch_git
from tools.repo.hidden_changes import LISTING, hidden_changes, nul_separated
from tools.temp_folders import LOCK_REASON, lock_owner

PREFIX = "debug-agent-wt-"


class GitError(ToolError):
    pass


def open_repo(path: Path) -> git.Repo:
    if path.exists() and not path.is_dir():
        raise GitError(f"{path} is a file, not the folder of a git repository")
    try:
        repo = git.Repo(path, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError(f"{path} is not a git repository") from None
    if repo.bare:  # no working tree: nothing to build, run or compare against
        raise GitError(
            f"{repo.git_dir} is a bare repository (no working tree): point [target] repo at a "
            f"clone with a checkout (git clone {repo.git_dir} FOLDER)"
        )
    if _object_format(repo) != "sha1":  # GitPython's objects are 20-byte ids
        raise GitError(
            f"{repo.git_dir} uses {_object_format(repo)} object ids: debug-agent reads "
            "repositories through GitPython, which reads only sha1 ones"
        )
    # no opportunistic index refresh: reading must not rewrite the user's index
    repo.git.update_environment(GIT_OPTIONAL_LOCKS="0", **isolation(repo.common_dir))
    return repo


def _object_format(repo: git.Repo) -> str:
    with repo.config_reader("repository") as config:
        return str(config.get_value("extensions", "objectformat", "sha1")).lower()


def resolve_ref(repo: git.Repo, ref: str) -> str:
    """The commit `ref` names: any of git's revision forms (a tag, `HEAD~3`, `:/message`,
    `HEAD@{yesterday}`); a tree or a blob is one line saying so."""
    try:
        # the object first, then its commit: `:/message^{commit}` would search for that text
        found = repo.git.rev_parse("--verify", "--quiet", "--end-of-options", ref)
    except git.GitCommandError:
        found = None
    if found:
        try:
            return repo.git.rev_parse("--verify", "--quiet", f"{found}^{{commit}}")
        except git.GitCommandError:
            kind = repo.git.cat_file("-t", found)
            raise GitError(f"{ref!r} names a {kind}, not a commit") from None
    if not repo.head.is_valid():
        raise GitError(
            f"{repo.working_tree_dir} has no commit yet: commit the good state, then start "
            "again (the search compares the working tree with a commit)"
        )
    shallow = Path(repo.common_dir, "shallow").is_file()
    hint = " (a shallow clone: `git fetch --unshallow` brings the history)" if shallow else ""
    raise GitError(f"unknown git ref {ref!r} in {repo.working_tree_dir}{hint}")


def excluding(paths: Sequence[str]) -> list[str]:
    """Pathspecs for `git ... -- .` that leave out exactly these paths (a folder: all below it)."""
    return [f":(exclude,literal){path}" for path in paths]


@contextmanager
def scratch_index(repo: git.Repo) -> Iterator[None]:
    """Git commands run inside on a copy of the repository's index: the user's is never written."""
    with tempfile.TemporaryDirectory(prefix="debug-agent-index-") as tmp:
        copy = Path(tmp) / "index"
        real = Path(repo.git_dir) / "index"
        if real.exists():
            # with its mtime: git tells a file changed within the second the index was written
            # ("racily clean") by comparing with the index file's own mtime
            shutil.copy2(real, copy)
        with repo.git.custom_environment(GIT_INDEX_FILE=str(copy)):
            _unhide_changes(repo)
            yield


def _unhide_changes(repo: git.Repo) -> None:
    """Changes git hides (tools/repo/hidden_changes.py) shown in the index copy."""
    listing = repo.git.execute(["git", *LISTING], strip_newline_in_stdout=False)
    for flag, paths in hidden_changes(str(listing), str(repo.working_tree_dir)).items():
        with tempfile.TemporaryFile() as names:
            names.write(nul_separated(paths))
            names.seek(0)
            repo.git.update_index(flag, "-z", "--stdin", istream=names)


def literal(paths: Sequence[str]) -> list[str]:
    """Pathspecs that name exactly these paths (a folder: all below it)."""
    return [f":(literal){path}" for path in paths]


def untracked_paths(cmd: git.Git, own: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """New paths git does not know yet in the tree `cmd` runs in (any name survives: they come
    NUL-separated), and apart the git repositories among them with no commit, which no git tree
    can hold."""
    listed = cmd.ls_files(
        "-z",
        "--others",
        "--exclude-standard",
        "--",
        ".",
        *excluding(own),
        strip_newline_in_stdout=False,
    )
    paths, commitless = [], []
    for entry in (e for e in listed.split("\0") if e):
        path = entry.rstrip("/")  # a repository inside the tree ends with "/"
        try:
            if entry.endswith("/"):
                git.Git(Path(str(cmd.working_dir)) / path).rev_parse("--verify", "HEAD")
            paths.append(path)
        except git.GitCommandError:
            commitless.append(path)
    return paths, commitless


def add_paths(cmd: git.Git, paths: Sequence[str], *flags: str) -> None:
    """`git add FLAGS` of exactly these paths, whatever their names (read from a file, NUL-
    separated): no pathspec names an ignored path, which `git add` refuses even to exclude."""
    if not paths:
        return
    with tempfile.NamedTemporaryFile(prefix="debug-agent-paths-") as listing:
        listing.write(
            b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in literal(paths))
        )
        listing.flush()
        cmd.add(*flags, f"--pathspec-from-file={listing.name}", "--pathspec-file-nul")


class StaleWorktree(BaseModel):
    path: str
    owner_pid: int


@contextmanager
def _worktrees_of(repo: git.Repo) -> Iterator[None]:
    """One process at a time adds, lists or removes a repository's worktrees: experiments run
    side by side (a cluster's slots on one node) and git reads a worktree half made as an
    error. The lock is taken on the repository's own folder (git takes none there): no lock
    file is made, in the repository or anywhere else."""
    import fcntl

    handle = os.open(repo.common_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # releases the lock


def _drop_half_made(repo: git.Repo) -> None:
    """Our worktrees whose `git worktree add` was killed before it wrote the entry's files
    (a SIGKILL mid-add): git fails every `worktree list` on such an entry. Called with the
    lock held, so no add of ours is under way: one without `commondir` is debris."""
    admin = Path(repo.common_dir) / "worktrees"
    for entry in admin.glob(f"{PREFIX}*") if admin.is_dir() else []:
        if not (entry / "commondir").is_file() or not (entry / "gitdir").is_file():
            shutil.rmtree(entry, ignore_errors=True)
            shutil.rmtree(Path(tempfile.gettempdir()) / entry.name, ignore_errors=True)


def _listing(repo: git.Repo, tries: int = 5) -> str:
    """`git worktree list`, with the lock held. A `git worktree add` whose owner was killed
    can outlive it (the lock goes with the owner; the git process it started runs on) and
    write an entry half made while we list: cleared and listed again."""
    with _worktrees_of(repo):
        for attempt in range(tries):
            _drop_half_made(repo)
            try:
                return repo.git.worktree("list", "--porcelain")
            except git.GitCommandError:
                if attempt == tries - 1:
                    raise
                time.sleep(0.2)
    return ""


def _our_worktrees(repo: git.Repo) -> list[StaleWorktree]:
    found, path = [], None
    listing = _listing(repo)
    for line in listing.splitlines():
        if line.startswith("worktree "):
            path = line.removeprefix("worktree ")
        elif line.startswith("locked ") and path:
            pid = lock_owner(line.removeprefix("locked "))
            if pid is not None:
                found.append(StaleWorktree(path=path, owner_pid=pid))
    return found


def _remove(repo: git.Repo, path: str) -> None:
    # if unregistered, only the folder is left
    with _worktrees_of(repo), contextlib.suppress(git.GitCommandError):
        repo.git.worktree("remove", "--force", "--force", path)
    shutil.rmtree(path, ignore_errors=True)


def reap_stale_worktrees(repo_dir: Path) -> list[StaleWorktree]:
    """Remove the worktrees of debug-agent runs that died (their owner pid is gone)."""
    repo = open_repo(repo_dir)
    stale = [w for w in _our_worktrees(repo) if not psutil.pid_exists(w.owner_pid)]
    for worktree in stale:
        _remove(repo, worktree.path)
    return stale


def join_patches(patches: list[str]) -> str:
    """One patch for `git apply` from single-hunk patches (each ends with a newline)."""
    return "".join(p if p.endswith("\n") else p + "\n" for p in patches)


# Worktrees kept between experiments, by repository, while an investigation holds the pool
# (reused_worktrees): checking out transformers' 2,681 files cost 2.4 s a launch, moving an
# existing tree to the next state a fraction of it. None: every worktree is removed when done.
_idle: dict[str, list[tuple[git.Repo, Path]]] | None = None
_idle_lock = threading.Lock()


@contextmanager
def reused_worktrees() -> Iterator[None]:
    """Within: a scratch worktree, done with, waits for the next experiment on its repository,
    which resets it to its own state (every tracked file as the commit has it, every other file
    removed: ignored ones and bytecode too). On exit all are removed."""
    global _idle
    with _idle_lock:
        outer, _idle = _idle, _idle if _idle is not None else {}
    try:
        yield
    finally:
        if outer is None:
            with _idle_lock:
                kept, _idle = _idle or {}, None
            for trees in kept.values():
                for repo, path in trees:
                    _remove(repo, str(path))


def _take(repo: git.Repo, sha: str) -> Path | None:
    """An idle worktree of `repo`, reset to `sha`; None when there is none (or a reset fails:
    that tree is removed)."""
    with _idle_lock:
        waiting = _idle.get(str(repo.common_dir)) if _idle is not None else None
        if not waiting:
            return None
        _, path = waiting.pop()
    try:
        cmd = scratch_git(path, repo)
        cmd.reset("-q", "--hard", sha)
        cmd.clean("-q", "-f", "-f", "-d", "-x")
    except git.GitCommandError:
        _remove(repo, str(path))
        return None
    return path


def _done_with(repo: git.Repo, path: Path) -> None:
    with _idle_lock:
        if _idle is not None:
            _idle.setdefault(str(repo.common_dir), []).append((repo, path))
            return
    _remove(repo, str(path))


def _add(repo: git.Repo, sha: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix=PREFIX))  # 0700: the tree is the user's source
    try:
        with _worktrees_of(repo):
            repo.git.worktree(
                "add",
                "--detach",
                "--lock",
                "--reason",
                f"{LOCK_REASON}{os.getpid()} on {socket.gethostname()}",
                str(path),
                sha,
            )
    except BaseException:  # git refused (a full disk, a missing object) or we were stopped
        shutil.rmtree(path, ignore_errors=True)
        raise
    return path


@contextmanager
def scratch_worktree(
    repo_dir: Path, good_sha: str, patches: list[str], keep_patch: Path | None = None
) -> Iterator[Path]:
    """A detached worktree at `good_sha` with `patches` applied, to its index too (a submodule's
    pointer lives only there); removed on exit (kept for the next one, reset, while
    reused_worktrees holds the pool)."""
    repo = open_repo(repo_dir)
    path = _take(repo, good_sha) or _add(repo, good_sha)
    kept = False
    try:
        if patches:
            patch_text = join_patches(patches)
            patch_file = (keep_patch or path.parent / f"{path.name}.patch").resolve()
            patch_file.parent.mkdir(parents=True, exist_ok=True)
            # a name that is no UTF-8 travels as git wrote it (unquote keeps its bytes)
            patch_file.write_bytes(patch_text.encode("utf-8", "surrogateescape"))
            try:
                scratch_git(path, repo).apply("--index", "--whitespace=nowarn", str(patch_file))
            except git.GitCommandError as e:
                raise GitError(f"the chosen hunks do not apply together: {git_said(e)}") from None
            finally:
                if keep_patch is None:
                    patch_file.unlink(missing_ok=True)
        yield path
        kept = True
    finally:
        if kept:
            _done_with(repo, path)
        else:  # an experiment that failed leaves no tree to reuse
            _remove(repo, str(path))
