"""The SSH connection to the node (paramiko): commands, files, and the helper that runs there.

`[host] ssh = "user@host[:port]"` is resolved through ~/.ssh/config like OpenSSH does (HostName,
User, Port, IdentityFile, UserKnownHostsFile); explicit parts of the spec win. Host keys must be
known: an unknown host is refused, never trusted on first use. One connection per host is kept
for the whole process and reopened when it drops.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shlex
import socket
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    import paramiko

from tools.bounded_read import check_regular, check_size
from tools.config import HostSection
from tools.digits import is_digits
from tools.errors import ToolError
from tools.limits import MAX_RESULT_BYTES

_TOOLS = Path(__file__).parent.parent
UPLOADS = {  # the node's copy of each, by its path under the cache folder (all side by side)
    "remote_helper.py": _TOOLS / "node" / "remote_helper.py",
    "node_build.py": _TOOLS / "node" / "node_build.py",
    "group_keeper.py": _TOOLS / "proc" / "group_keeper.py",
    "temp_folders.py": _TOOLS / "temp_folders.py",
    "hidden_changes.py": _TOOLS / "repo" / "hidden_changes.py",
    "hooks/sitecustomize.py": _TOOLS / "proc" / "hooks" / "sitecustomize.py",
}
REMOTE_CACHE = ".cache/debug-agent"  # under the node user's home

# paramiko logs what it then raises (e.g. a refused channel the tunnel expects and handles);
# without a handler Python would print those lines on the user's terminal
logging.getLogger("paramiko").addHandler(logging.NullHandler())


# printed first on stdout and stderr by every command we run: what comes before it is the login
# shell's own (a greeting in ~/.bashrc, which sshd's bash reads), not the command's
OUTPUT_BEGINS = b"--debug-agent-output-begins--\n"
_GREETING_LIMIT = 1 << 20


def marked(command: str, replace_shell: bool = False) -> str:
    """`command` after the mark; `replace_shell`: exec'd in the shell's place, so that the
    program's process, exit status and signals are those it would have run alone."""
    mark = shlex.quote(OUTPUT_BEGINS.decode().strip())
    run = f"exec env {command}" if replace_shell else command  # env: VAR=value words too
    return f"printf '%s\\n' {mark}; printf '%s\\n' {mark} >&2; {run}"


def after_mark(output: bytes) -> bytes:
    """A command's output without what the login shell wrote before it."""
    at = output.find(OUTPUT_BEGINS)
    return output[at + len(OUTPUT_BEGINS) :] if at >= 0 else output


class HostError(ToolError):
    """The node cannot be reached or used; one line for the user."""


class HostLost(HostError):
    """The connection dropped while something ran on the node."""


class Endpoint(BaseModel):
    alias: str
    hostname: str
    user: str
    port: int
    identities: list[str]
    known_hosts: list[str]

    @property
    def address(self) -> str:
        """host:port, an IPv6 address in brackets (as ssh:// URLs and known_hosts write it)."""
        host = f"[{self.hostname}]" if ":" in self.hostname else self.hostname
        return f"{host}:{self.port}"

    @property
    def label(self) -> str:
        return f"{self.user}@{self.address}"


def resolve(host: HostSection) -> Endpoint:
    """`[host]` plus ~/.ssh/config, as OpenSSH would combine them."""
    spec = host.ssh
    user, _, rest = spec.rpartition("@")
    alias, port = _host_and_port(rest)
    if not alias or (port and not is_digits(port)):
        raise HostError(f"[host] ssh = {spec!r}: expected user@host[:port] ([IPv6]:port)")
    found = _ssh_config(alias)
    # OpenSSH passes over an IdentityFile of ~/.ssh/config that is missing or not a key
    identities = [host.identity] if host.identity else found.get("identityfile", [])
    identities = [p for p in identities if host.identity or not _key_problem(p)]
    known = [
        str(Path.home() / ".ssh" / "known_hosts"),
        *found.get("userknownhostsfile", "").split(),
        *([host.known_hosts] if host.known_hosts else []),
    ]
    number = port or str(found.get("port", 22))  # a number past 65535 wrapped around
    if not is_digits(number) or not 0 < int(number) < 65536:
        where = f"[host] ssh = {spec!r}" if port else f"~/.ssh/config's Port for {alias}"
        raise HostError(f"{where}: {number!r} is not a port (1 to 65535)")
    if host.identity and (why := _key_problem(host.identity)):
        raise HostError(f"[host] identity file {host.identity} {why}")
    return Endpoint(
        alias=alias,
        hostname=found.get("hostname", alias),
        user=user or found.get("user") or os.environ.get("USER", "root"),
        port=int(number),
        identities=[str(Path(p).expanduser()) for p in identities],
        known_hosts=[str(Path(p).expanduser()) for p in known],
    )


def _host_and_port(rest: str) -> tuple[str, str]:
    """`host:port`, `[IPv6 address]:port`, or a host or a bare IPv6 address without a port
    ("" where the text says no host)."""
    if rest.startswith("["):
        inside, closed, after = rest[1:].partition("]")
        if not closed or (after and not after.startswith(":")):
            return "", ""
        return inside, after[1:]
    if rest.count(":") > 1:  # a bare IPv6 address, as ssh takes one: no port
        return rest, ""
    host, _, port = rest.partition(":")
    return host, port


def _ssh_config(alias: str) -> dict:
    """What ~/.ssh/config says of `alias` (nothing where there is no such file)."""
    import paramiko

    config_file = Path.home() / ".ssh" / "config"
    if not config_file.exists():
        return {}
    try:
        return paramiko.SSHConfig.from_path(str(config_file)).lookup(alias)
    except UnicodeDecodeError:
        raise HostError("~/.ssh/config is not UTF-8 text: OpenSSH's config is") from None
    except paramiko.ConfigParseError as e:
        raise HostError(f"~/.ssh/config cannot be read: {e}") from None


def _key_problem(path: str) -> str | None:
    """Why the private key file at `path` cannot be used (None: it can, or it needs a
    passphrase, which the ssh-agent may hold)."""
    import paramiko

    key = Path(path).expanduser()
    if not key.is_file():
        return "is not a regular file" if key.exists() else "not found"
    try:
        paramiko.PKey.from_path(key)
    except TypeError:  # cryptography's word for a key that needs its passphrase
        return None
    except (OSError, ValueError, paramiko.SSHException):  # not UTF-8 text: a ValueError
        hint = ": the private key is the file without .pub" if key.suffix == ".pub" else ""
        return f"is not a private key{hint}"
    return None


class SSHHost:
    """An open connection to the node."""

    def __init__(self, host: HostSection) -> None:
        self.section = host
        self.endpoint = resolve(host)
        self.client = self._connect()
        self._sftp = None
        self._helper: str | None = None
        self._home: str | None = None

    def _connect(self):
        import paramiko

        e = self.endpoint
        client = paramiko.SSHClient()
        for path in e.known_hosts:
            if Path(path).is_file():
                try:
                    client.load_host_keys(path)
                except UnicodeDecodeError:
                    raise HostError(f"known hosts file {path} is not UTF-8 text") from None
                except paramiko.SSHException as err:
                    raise HostError(f"known hosts file {path} cannot be read: {err}") from None
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        try:
            client.connect(
                e.hostname,
                e.port,
                e.user,
                key_filename=e.identities or None,
                timeout=self.section.connect_timeout_s,
                banner_timeout=self.section.connect_timeout_s,
                auth_timeout=self.section.connect_timeout_s,
            )
        except socket.gaierror:
            raise HostError(
                f"cannot resolve host {e.hostname!r} ([host] ssh = {self.section.ssh!r})"
            ) from None
        except paramiko.PasswordRequiredException:
            raise HostError(
                f"{e.label}: the SSH key ({', '.join(e.identities)}) needs its passphrase, "
                "which debug-agent does not ask: add the key to ssh-agent (ssh-add)"
            ) from None
        except paramiko.AuthenticationException as err:
            if "timeout" in str(err).lower() or "transport shut down" in str(err):
                # a loaded or restarting sshd, not a key it refused
                raise HostError(f"{e.label} did not complete the SSH login: {err}") from None
            keys = ", ".join(e.identities) or "the agent's and ~/.ssh/id_* keys"
            raise HostError(f"{e.label} refused the SSH key ({keys})") from None
        except paramiko.SSHException as err:
            if "not found in known_hosts" in str(err):
                raise HostError(
                    f"host key of {e.address} is not known: connect "
                    "once with ssh to check and add it, or set [host] known_hosts"
                ) from None
            raise HostError(f"SSH to {e.label} failed: {err}") from None
        except (OSError, EOFError) as err:
            reason = getattr(err, "strerror", None) or str(err) or type(err).__name__
            raise HostError(f"cannot reach {e.label}: {reason}") from None
        transport = client.get_transport()
        if transport is not None:
            transport.set_keepalive(5)
        return client

    @property
    def alive(self) -> bool:
        transport = self.client.get_transport()
        return transport is not None and transport.is_active()

    def run(self, command: str, timeout_s: float = 60.0) -> tuple[int, str, str]:
        """Run a shell command on the node: (exit code, stdout, stderr)."""
        try:
            _, out, err = self.client.exec_command(marked(command), timeout=timeout_s)
            stdout, stderr = (
                after_mark(out.read()).decode(errors="replace"),
                after_mark(err.read()).decode(errors="replace"),
            )
            return out.channel.recv_exit_status(), stdout, stderr
        except (OSError, EOFError) as e:
            raise self._lost(e) from None

    def _lost(self, error: BaseException) -> HostLost:
        return HostLost(
            f"connection to {self.endpoint.label} lost: {error or type(error).__name__}"
        )

    def start(self, command: str, timeout_s: float = 60.0) -> tuple[paramiko.Channel, bytes]:
        """A channel running `command` (one program, with its arguments and variables) on the
        node, read past the login shell's greeting, and what the program wrote after it that
        was read with the greeting."""
        try:
            channel = self.client.get_transport().open_session()
            channel.exec_command(marked(command, replace_shell=True))
            channel.settimeout(timeout_s)
            seen = b""
            while (at := seen.find(OUTPUT_BEGINS)) < 0:
                chunk = channel.recv(65536)
                if not chunk:  # the shell ended before the command: it has nothing to say
                    return channel, b""
                seen = (seen + chunk)[-_GREETING_LIMIT:]
            channel.settimeout(None)
            return channel, seen[at + len(OUTPUT_BEGINS) :]
        except TimeoutError:
            raise HostLost(
                f"{self.endpoint.label} did not start {command!r} in {timeout_s:g} s"
            ) from None
        except (OSError, EOFError, AttributeError) as e:  # no transport: AttributeError
            raise self._lost(e) from None

    @property
    def sftp(self):
        if self._sftp is None:
            self._sftp = self.client.open_sftp()
        return self._sftp

    def read_text(self, path: str) -> str:
        try:
            check_regular(f"{path} on {self.endpoint.alias}", self.sftp.stat(path).st_mode or 0)
            with self.sftp.open(path) as f:
                data = check_size(path, f.read(MAX_RESULT_BYTES + 1), MAX_RESULT_BYTES)
                return data.decode(errors="replace")
        except OSError as e:
            if not self.alive:
                raise HostLost(f"connection to {self.endpoint.label} lost") from None
            raise HostError(f"cannot read {path} on {self.endpoint.alias}: {e}") from None

    def fetch(self, remote: str, local: Path) -> None:
        """Copy a file, or a folder's files, from the node; what is missing is skipped."""
        import stat

        try:
            mode = self.sftp.stat(remote).st_mode or 0
        except FileNotFoundError:
            return
        if stat.S_ISDIR(mode):
            local.mkdir(parents=True, exist_ok=True)
            for name in self.sftp.listdir(remote):
                self.fetch(f"{remote}/{name}", local / name)
        else:
            local.parent.mkdir(parents=True, exist_ok=True)
            self.sftp.get(remote, str(local))

    def upload(self, local: Path, remote: str, keep_same_size: bool = False) -> None:
        """Copy a file, or a folder's files, to the node (with `keep_same_size`, a file there
        of the same size is taken as the same: a wheel folder sent again sends what is new)."""
        if local.is_dir():
            self.run(f"mkdir -p {shlex.quote(remote)}")
            for child in sorted(local.iterdir()):
                self.upload(child, f"{remote}/{child.name}", keep_same_size)
            return
        if keep_same_size:
            try:
                if self.sftp.stat(remote).st_size == local.stat().st_size:
                    return
            except FileNotFoundError:
                pass
        self.sftp.put(str(local), remote)

    def home(self) -> str:
        """The node user's home folder (asked once per connection)."""
        if self._home is None:
            code, home, err = self.run('printf %s "$HOME"')
            if code != 0 or not home:
                raise HostError(f"cannot find the home folder on {self.endpoint.alias}: {err}")
            self._home = home
        return self._home

    def helper(self) -> str:
        """The helper script's path on the node (uploaded once per version), and its hooks."""
        if self._helper is None:
            tag = hashlib.sha256(
                b"".join(path.read_bytes() for path in UPLOADS.values())
            ).hexdigest()[:12]
            base = f"{self.home()}/{REMOTE_CACHE}/{tag}"
            self.run(f"mkdir -p {shlex.quote(base)}/hooks")
            for name, path in UPLOADS.items():
                # written aside, then renamed: another agent's supervisor on this node may be
                # starting from the file this moment (put rewrites it in place)
                aside = f"{base}/{name}.{os.getpid()}-{id(self)}"
                self.sftp.put(str(path), aside)
                self.sftp.posix_rename(aside, f"{base}/{name}")
            self._helper = f"{base}/remote_helper.py"
        return self._helper

    def close(self) -> None:
        self.client.close()


_open: dict[str, SSHHost] = {}


def connect(host: HostSection) -> SSHHost:
    """The process's connection to `host`, opened (or reopened after a drop) as needed."""
    key = host.model_dump_json()
    current = _open.get(key)
    if current is not None and current.alive:
        return current
    retries = 0 if current is None else 2  # a node that answered before: a drop may be brief
    for attempt in range(retries):
        try:
            _open[key] = current = SSHHost(host)
            return current
        except HostError:
            time.sleep(1.0 + attempt)
    _open[key] = current = SSHHost(host)
    return current
