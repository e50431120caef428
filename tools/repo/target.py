"""The repository under study, wherever it lives: here, or on the node ([host]); and `Target`,
what always travels with it.

A remote repository is read through a local mirror: the node's good commit fetched with git
(same SHAs), with the node's working-tree changes applied on top. Candidates, source reading
and path evidence use the mirror; experiments run on the node itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import git

from tools.config import TargetConfig
from tools.folders import state_dir
from tools.node.ssh_git import HOST_VAR
from tools.node.ssh_host import HostError, connect
from tools.repo.candidates import CandidateSet, GitError, list_candidates
from tools.repo.git_failure import git_said

_mirrored: dict[str, tuple[Path, str, str]] = {}  # per process: (mirror, good sha, node root)


def target_repo(config: TargetConfig, config_dir: Path) -> Path:
    """The local folder to read the target's source from."""
    if config.host is None:
        return config_dir / config.target.repo
    return _mirror(config)[0]


def target_candidates(config: TargetConfig, config_dir: Path) -> CandidateSet:
    if config.host is None:
        return list_candidates(config_dir / config.target.repo, config, config_dir)
    path, sha, root = _mirror(config)
    pinned = config.model_copy(update={"target": config.target.model_copy(update={"good": sha})})
    cands = list_candidates(path, pinned, config_dir)
    return cands.model_copy(
        update={"good": config.target.good, "repo": f"{config.host.ssh}:{root}"}
    )


@dataclass(frozen=True)
class Target:
    """The target under study: its config (debug-agent.toml), the folder that config was read
    from (relative paths in it start there), and its candidates."""

    config: TargetConfig
    config_dir: Path
    cands: CandidateSet

    @classmethod
    def load(cls, config: TargetConfig, config_dir: Path) -> Target:
        """The target with its candidates listed now (the diff against the good ref)."""
        return cls(config, config_dir, target_candidates(config, config_dir))

    def source_dir(self) -> Path:
        """The local folder to read the target's source from (a mirror for a remote node)."""
        return target_repo(self.config, self.config_dir)


def node_state(config: TargetConfig) -> dict:
    """The node's repository root, good commit and working-tree patch (nothing is written)."""
    assert config.host is not None
    host = connect(config.host)
    helper = host.helper()
    code, out, err = host.run(
        " ".join(
            shlex.quote(a)
            for a in (config.host.python, helper, "state", config.target.repo, config.target.good)
        )
    )
    if code != 0:
        last = (err.strip().splitlines() or [f"exit {code}"])[-1]
        raise HostError(f"cannot run {config.host.python} on {host.endpoint.alias}: {last}")
    reply = json.loads(out)
    if not reply["ok"]:
        raise HostError(f"on {host.endpoint.alias}: {reply['error']}")
    return reply


def _mirror(config: TargetConfig) -> tuple[Path, str, str]:
    assert config.host is not None
    key = f"{config.host.ssh}:{config.target.repo}@{config.target.good}"
    if key in _mirrored:
        return _mirrored[key]
    state = node_state(config)
    root, sha = state["root"], state["sha"]
    path = (
        state_dir()
        / "mirrors"
        / hashlib.sha256(f"{config.host.ssh}:{root}".encode()).hexdigest()[:16]
    )
    repo = git.Repo(path) if (path / ".git").exists() else git.Repo.init(path)
    try:
        if not _has_commit(repo, sha):
            endpoint = connect(config.host).endpoint
            env = {
                **os.environ,
                # -I: neither PYTHONPATH nor the folder git runs it in holds a `tools` of its own
                "GIT_SSH_COMMAND": f"{shlex.quote(sys.executable)} -I -m tools.node.ssh_git",
                "GIT_SSH_VARIANT": "ssh",
                HOST_VAR: config.host.model_dump_json(),
            }
            repo.git.fetch(
                f"ssh://{endpoint.label}{root}",
                "+HEAD:refs/remotes/node/HEAD",
                "+refs/heads/*:refs/remotes/node/heads/*",
                "+refs/tags/*:refs/remotes/node/tags/*",
                env=env,
            )
        if not _has_commit(repo, sha):
            raise HostError(
                f"the good commit {sha[:12]} is not on a branch, tag or HEAD of "
                f"{root} on the node: it cannot be fetched"
            )
        repo.git.checkout("--quiet", "--force", "--detach", sha)
        repo.git.clean("-q", "-f", "-d", "-x")
        if state["patch"]:
            apply_node_patch(repo, state["patch"], path.parent / f"{path.name}.patch")
    except git.GitCommandError as e:
        raise GitError(f"cannot mirror {root} from the node: {git_said(e)}") from None
    _mirrored[key] = (path, sha, root)
    return _mirrored[key]


# a part of a `git diff` (from one "diff --git" line to the next) that moves a submodule pointer
_GITLINK = re.compile(r"^(index \S+ 160000|(new|deleted) file mode 160000)$", re.MULTILINE)


def apply_node_patch(repo: git.Repo, patch: str, scratch: Path) -> None:
    """The node's working-tree changes onto the mirror's checkout of the good commit. A submodule
    pointer lives only in the index (no submodule is checked out here), so those parts go there
    too: the mirror's own diff then shows them, as the node's does."""
    scratch.write_text(patch)
    try:
        repo.git.apply("--binary", "--whitespace=nowarn", str(scratch))
        parts = re.split(r"^(?=diff --git )", patch, flags=re.MULTILINE)
        gitlinks = "".join(part for part in parts if _GITLINK.search(part))
        if gitlinks:
            scratch.write_text(gitlinks)
            repo.git.apply("--cached", str(scratch))
    finally:
        scratch.unlink(missing_ok=True)


def _has_commit(repo: git.Repo, sha: str) -> bool:
    try:
        repo.git.cat_file("-e", f"{sha}^{{commit}}")
        return True
    except git.GitCommandError:
        return False
