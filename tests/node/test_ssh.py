"""A target on a node over SSH, against a real sshd on 127.0.0.1 (tests/node/sshd.py).

The "node" is this machine reached through sshd: every git, launch, bench and env step goes
through the SSH connection, and the agent's side reads only the mirror and copied-back logs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import only_main_worktree, repo_fingerprint, run_cli
from tests.node.sshd import Sshd  # the sshd fixtures come from tests/node/sshd.py (see conftest)
from tools.config import load_config
from tools.experiment import ExperimentOptions, ExperimentSpec, run_experiment
from tools.lab.create import create_lab
from tools.repo.target import Target

ALIAS = "gpu-node"


def _home(tmp_path: Path, server: Sshd, key: str | None = None) -> dict[str, str]:
    """A HOME whose ~/.ssh/config names the node, as a user's would."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True, exist_ok=True)
    (home / ".ssh" / "config").write_text(
        f"Host {ALIAS}\n  HostName 127.0.0.1\n  Port {server.port}\n  User {server.user}\n"
        f"  IdentityFile {key or server.key}\n  UserKnownHostsFile {server.known_hosts}\n"
    )
    return {"HOME": str(home)}


def _remote_config(
    tmp_path: Path, lab: Path, ssh: str = ALIAS, repo: str | None = None, extra: str = ""
) -> Path:
    """The lab's own config, pointed at the lab through the node."""
    text = (lab / "debug-agent.toml").read_text().replace('repo = "."', f'repo = "{repo or lab}"')
    folder = tmp_path / "here"
    folder.mkdir(exist_ok=True)
    (folder / "debug-agent.toml").write_text(f'{text}\n[host]\nssh = "{ssh}"\n{extra}')
    return folder


def _one_line_error(done: subprocess.CompletedProcess, *expected: str) -> None:
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for text in expected:
        assert text in lines[0], lines[0]


def _run_processes(sshd: Sshd) -> list[psutil.Process]:
    """Processes started by this server's node supervisor: their cwd is in a run folder of
    its sessions' TMPDIR (the other worker's node tests run servers of the same shape)."""
    found = []
    for proc in psutil.process_iter():
        try:
            cwd = proc.cwd()
            if cwd.startswith(f"{sshd.tmp}/debug-agent-run-") and (
                proc.status() != psutil.STATUS_ZOMBIE
            ):
                found.append(proc)
        except psutil.Error:
            continue
    return found


def _wait(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    path = tmp_path / "node-repo"
    create_lab("seed", path)
    return path


def test_check_on_the_node_and_its_one_line_errors(
    sshd: Sshd,
    lab: Path,
    tmp_path: Path,
) -> None:
    env = _home(tmp_path, sshd)
    done = run_cli("check", cwd=_remote_config(tmp_path, lab), env=env)
    assert done.returncode == 0, done.stderr
    assert f"{ALIAS}:{lab}" in done.stdout
    closed = run_cli("check", cwd=_remote_config(tmp_path, lab, ssh="me@127.0.0.1:1"), env=env)
    _one_line_error(closed, "cannot reach me@127.0.0.1:1")
    wrapped = run_cli("check", cwd=_remote_config(tmp_path, lab, ssh="me@127.0.0.1:65558"), env=env)
    _one_line_error(wrapped, "'65558' is not a port (1 to 65535)")  # was port 22, wrapped
    odd = tmp_path / "odd-home"
    (odd / ".ssh").mkdir(parents=True)
    (odd / ".ssh" / "config").write_text("Host odd\n  HostName 127.0.0.1\n  Port ssh\n")
    from_config = run_cli(
        "check", cwd=_remote_config(tmp_path, lab, ssh="odd"), env={"HOME": str(odd)}
    )
    _one_line_error(from_config, "~/.ssh/config's Port for odd: 'ssh' is not a port")
    nowhere = run_cli("check", cwd=_remote_config(tmp_path, lab, ssh="gpu.invalid"), env=env)
    _one_line_error(nowhere, "cannot resolve host 'gpu.invalid'")
    wrong_key = run_cli(
        "check",
        cwd=_remote_config(tmp_path, lab),
        env=_home(tmp_path / "other", sshd, key=sshd.wrong_key),
    )
    _one_line_error(wrong_key, "refused the SSH key", sshd.wrong_key)
    missing = run_cli(
        "check", cwd=_remote_config(tmp_path, lab, repo="/srv/no-such-sglang"), env=env
    )
    _one_line_error(missing, "no folder /srv/no-such-sglang")
    no_repo = run_cli("check", cwd=_remote_config(tmp_path, lab, repo=str(tmp_path)), env=env)
    _one_line_error(no_repo, "is not a git repository")
    unknown = run_cli(
        "check",
        cwd=_remote_config(tmp_path, lab, ssh=sshd.spec, extra=f'identity = "{sshd.key}"\n'),
        env=env,
    )
    _one_line_error(unknown, "host key of 127.0.0.1", "not known")


def test_investigation_on_the_node_matches_the_local_one(
    sshd: Sshd,
    lab: Path,
    tmp_path: Path,
) -> None:
    before = repo_fingerprint(lab)
    local = json.loads(
        run_cli("investigate", "--symptom", "verify 29ms", "--json", cwd=lab, timeout=300).stdout
    )
    done = run_cli(
        "investigate",
        "--symptom",
        "verify 29ms",
        "--json",
        cwd=_remote_config(tmp_path, lab),
        env=_home(tmp_path, sshd),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    remote = json.loads(done.stdout)
    assert remote["status"] == local["status"] == "confirmed"
    assert [c["id"] for c in remote["culprits"]] == [c["id"] for c in local["culprits"]]
    assert [c["file"] for c in remote["culprits"]] == [
        "python/sglang/srt/distributed/parallel_state.py"
    ]
    assert {d["file"] for d in remote["dropped"]} == {d["file"] for d in local["dropped"]}
    cleared = " ".join(" ".join(c["evidence"]) for c in remote["cleared"])
    assert "NCCL_PROTO=LL: reached 8/8 scheduler processes" in cleared
    assert remote["metric"]["bad"] > 26 and remote["metric"]["good"] < 21
    session = Path(remote["session_dir"])
    logs = sorted(session.glob("launches/*/server-1.log"))
    assert logs and all(
        "Uvicorn running" in log.read_text() or log.stat().st_size > 0 for log in logs
    )  # the node's server logs, copied back
    assert repo_fingerprint(lab) == before
    assert only_main_worktree(lab)
    assert _wait(lambda: not _run_processes(sshd), 10)


def test_a_node_that_refuses_port_forwarding_is_reached_through_relays(
    sshd_without_forwarding: Sshd, lab: Path, tmp_path: Path
) -> None:
    env = _home(tmp_path, sshd_without_forwarding)
    done = run_cli(
        "experiment",
        "--json",
        "--samples",
        "8",
        cwd=_remote_config(tmp_path, lab),
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert 26 < result["metric"]["median"] < 32 and len(result["metric"]["samples"]) == 8
    assert "Secsh" not in done.stderr and "prohibited" not in done.stderr  # expected, not news
    log = Path(sshd_without_forwarding.folder, "sshd.log").read_text()
    assert "refused local port forward" in log  # the direct way really was closed
    assert _wait(
        lambda: (
            not _run_processes(sshd_without_forwarding)
            and not _with_cmdline("remote_helper.py relay")
        ),
        15,
    )


def test_the_traced_launch_on_a_node_keeps_the_nodes_pythonpath(
    sshd_without_forwarding: Sshd,
    lab: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOME", _home(tmp_path, sshd_without_forwarding)["HOME"])
    folder = _remote_config(tmp_path, lab)
    toml = folder / "debug-agent.toml"  # the server finds sglang by its cwd, not PYTHONPATH
    toml.write_text(
        toml.read_text()
        .replace('PYTHONPATH = "python", ', "")
        .replace('command = "{python} -m', 'command = "env -C python {python} -m')
    )
    config = load_config(folder)
    result = run_experiment(
        Target.load(config, folder),
        ExperimentSpec(),
        tmp_path / "run",
        ExperimentOptions(requests=1, trace=True),
    )
    node_site = f"{sshd_without_forwarding.folder}/node-site"
    paths = {p.env.get("PYTHONPATH", "") for p in result.worker_env.processes}
    assert len(paths) == 1 and paths.pop().endswith(f"/hooks:{node_site}")
    assert result.import_trace and result.import_trace.files


def _start_experiment(
    tmp_path: Path,
    sshd: Sshd,
    lab: Path,
    *extra: str,
) -> subprocess.Popen:
    folder = _remote_config(tmp_path, lab)
    return subprocess.Popen(
        [sys.executable, "-m", "agent", "experiment", "--json", "--samples", "200", *extra],
        cwd=folder,
        env={**os.environ, **_home(tmp_path, sshd)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _server_up(sshd: Sshd) -> bool:
    """The server's main process and its 8 schedulers run on the node."""
    return len(_run_processes(sshd)) >= 9


def test_agent_killed_mid_experiment_leaves_nothing_on_the_node(
    sshd: Sshd,
    lab: Path,
    tmp_path: Path,
) -> None:
    agent = _start_experiment(tmp_path, sshd, lab)
    try:
        assert _wait(lambda: _server_up(sshd), 60), (
            agent.stderr.read() if agent.poll() is not None else ""
        )
    finally:
        agent.send_signal(signal.SIGKILL)  # no finally runs: only the TCP connection closes
        agent.wait()
    assert _wait(lambda: not _run_processes(sshd), 15), [p.cmdline() for p in _run_processes(sshd)]
    assert _wait(lambda: only_main_worktree(lab), 10)  # removed after the server has stopped


def _served_by(sshd: Sshd, processes: list[psutil.Process]) -> list[psutil.Process]:
    """Those started through this sshd (its sessions' TMPDIR), not the other worker's: a
    machine-wide kill of supervisors cut the other worker's experiment off."""
    found = []
    for proc in processes:
        try:
            if proc.environ().get("TMPDIR") == sshd.tmp:
                found.append(proc)
        except psutil.Error:
            continue
    return found


def _with_cmdline(*words: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter():
        try:
            if all(w in " ".join(proc.cmdline()) for w in words):
                found.append(proc)
        except psutil.Error:
            continue
    return found


def test_supervisor_killed_on_the_node_takes_its_server_along(
    sshd: Sshd,
    lab: Path,
    tmp_path: Path,
) -> None:
    agent = _start_experiment(tmp_path, sshd, lab)
    try:
        assert _wait(lambda: _server_up(sshd), 60)
        first = {p.pid for p in _run_processes(sshd)}
        for supervisor in _served_by(sshd, _with_cmdline("remote_helper.py", "supervise")):
            supervisor.kill()  # its cleanup never runs: the server's keeper must act
        assert _wait(lambda: not first & {p.pid for p in _run_processes(sshd)}, 15)
    finally:
        agent.kill()
        agent.wait()
    assert _wait(lambda: not _run_processes(sshd), 15)
    assert _wait(lambda: not _served_by(sshd, _with_cmdline("group_keeper.py")), 10)


def test_dropped_connection_discards_the_experiment_and_runs_it_again(
    sshd: Sshd, lab: Path, tmp_path: Path
) -> None:
    agent = _start_experiment(tmp_path, sshd, lab, "--out", str(tmp_path / "run"))
    try:
        assert _wait(lambda: _server_up(sshd), 60)
        first = {p.pid for p in _run_processes(sshd)}
        for child in psutil.Process(sshd.pid).children():  # the connection's sshd processes
            child.kill()
        out, err = agent.communicate(timeout=120)
    finally:
        agent.kill()
    assert agent.returncode == 0, err[-2000:]
    result = json.loads(out)
    assert 26 < result["metric"]["median"] < 32  # a whole, fresh measurement of the bad state
    assert len(result["metric"]["samples"]) == 200
    assert (
        "first attempt discarded: connection to" in (tmp_path / "run" / "retried.txt").read_text()
    )
    assert not first & {p.pid for p in _run_processes(sshd)}
    assert _wait(lambda: not _run_processes(sshd), 15)
