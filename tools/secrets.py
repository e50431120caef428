"""Secrets never leave the process: every file, transcript line and printed line goes through
`mask` first.

Two kinds of evidence make a value secret:
- what it is called: an env var, a dict key or a flag named like a credential (`HF_TOKEN`,
  `api_key`, `--api-key`), and the password of a URL (`https://user:pass@host`);
- what it looks like: the shapes of common tokens (`sk-...`, `hf_...`, `ghp_...`, AWS keys, JWTs).

Values learned from the target config and from this process's environment are remembered, so
they are masked wherever they turn up later (a server log echoing its arguments, an error line).
A masked value reads `***` and a short keyed hash of it: two different secrets stay told apart
(an env candidate's good and bad values, say), equal ones stay equal, and the hash cannot be
checked against a guess without this machine's key.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import re
import secrets as _random
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tools.folders import state_dir
from tools.json_text import parse_json

MASK = "***"
# a credential's name: words of a snake or kebab name, so `tokenizer_path` and
# `max_new_tokens` are not secrets but `HF_TOKEN`, `admin_api_key` and `db-password` are
_NAME = re.compile(
    r"(?:^|[_\-.])(?:(?:api|access|private|secret|auth|client)[_\-]?key|token|secret|"
    r"password|passwd|credentials?|auth)(?:$|[_\-.])",
    re.IGNORECASE,
)
_NAME_WORDS = ("key", "token", "secret", "passw", "credential", "auth")  # a quick pre-test
# ... unless the name's last word says it holds a setting about the credential, not the
# credential: RAY_AUTH_MODE=token (ray.init sets it), HF_TOKEN_PATH, AUTH_URL, API_KEY_FILE
_SETTING = re.compile(
    r"[_\-.](?:mode|type|method|scheme|provider|kind|enabled|url|uri|host|port|file|path|dir|"
    r"user|username|header)$",
    re.IGNORECASE,
)
_SHAPES = re.compile(
    r"\b(?:sk-[A-Za-z0-9_\-]{8,}|hf_[A-Za-z0-9]{8,}|gh[pousr]_[A-Za-z0-9]{8,}"
    r"|github_pat_[A-Za-z0-9_]{8,}|xox[abprs]-[A-Za-z0-9\-]{8,}|AKIA[0-9A-Z]{16}"
    r"|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{4,}|glpat-[A-Za-z0-9_\-]{8,})"
)
# a value after a name: quoted (any text but the quote) or bare (up to a separator; never
# the start of a structure or an escape: `"auth": {` and `KEY = \"x\"` are syntax, not values)
_VALUE = r"""(?:'(?P<sq>[^'\n]*)'|"(?P<dq>[^"\n]*)"|(?P<bare>(?![-{\[\\])[^\s'",)\]}]+))"""
# `--api-key X`, `--api-key=X`, `NAME=value`, `'name': 'value'`: the name decides (secret_name)
_FLAG = re.compile(r"(?<![\w-])--?(?P<name>[A-Za-z][\w\-]*)(?:=|[ \t]+)" + _VALUE)
_ASSIGN = re.compile(r"\b(?P<name>[A-Za-z_][\w.\-]*)\s*=\s*" + _VALUE)
_KEY_VALUE = re.compile(r"""['"](?P<name>[A-Za-z_][\w.\-]*)['"]\s*:\s*""" + _VALUE)
# an HTTP header with a credential's name (`X-Api-Key: v`, `Private-Token: v`): kebab names
# only, as Python's `api_key: Optional[str]` is an annotation, not a value
_HEADER = re.compile(r"(?<![\w-])(?P<name>[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+):[ \t]*" + _VALUE)
# the credential of an Authorization header or a bearer token (`curl -H "Authorization:
# Basic dXNlcjpw"`): no credential's name says it
_AUTHORIZATION = re.compile(
    r"(\b(?:authorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token)\s+)?|bearer\s+))"
    r"([A-Za-z0-9\-._~+/]{8,}=*)",
    re.IGNORECASE,
)
# the password of a URL: scheme://user:password@host
_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.\-]*://[^\s/:@]*:)([^\s/@]+)(@)", re.IGNORECASE)
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")
_NOT_SECRET = {"", "None", "null", "none", "true", "false", "True", "False"}
_MIN_KNOWN = 4  # shorter remembered values would mask ordinary words

_known: set[str] = set()
_key: bytes | None = None


def _machine_key() -> bytes:
    """A random key kept in the state folder: masks are stable here, unguessable elsewhere."""
    global _key
    if _key is None:
        path = state_dir() / "mask.key"
        fresh = _random.token_bytes(16)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(fresh)
        except OSError:
            pass  # there already (another process may have just written it), or read-only
        try:
            _key = path.read_bytes() or fresh
        except OSError:
            _key = fresh  # a read-only state folder: this process's masks stay consistent
    return _key


def _digest(value: str) -> str:
    """The keyed hash of a value, in hex."""
    return hmac.new(_machine_key(), value.encode("utf-8", "replace"), hashlib.sha256).hexdigest()


def masked(value: str) -> str:
    """The mask of one secret value: `***` and six hex digits of its keyed hash."""
    return MASK + _digest(value)[:6]


def fingerprint(value: str) -> str:
    """A keyed hash of a value, to tell whether two values are equal after both are masked
    (what a worker had against what was set) without keeping either."""
    return _digest(value)[:16]


@functools.lru_cache(maxsize=4096)  # the same keys and flags come back all the time
def secret_name(name: str) -> bool:
    return bool(_NAME.search(name)) and not _SETTING.search(name)


def remember(values: Iterable[str | None]) -> None:
    """Values to mask wherever they appear from now on (in this process)."""
    for value in values:
        if value and len(value) >= _MIN_KNOWN and not value.startswith(MASK):
            _known.add(value)


def learn_env(env: Mapping[str, str]) -> None:
    remember(v for k, v in env.items() if secret_name(k))
    remember(m.group(0) for v in env.values() for m in _SHAPES.finditer(v))


def _value(m: re.Match[str]) -> str:
    return next(v for v in (m.group("sq"), m.group("dq"), m.group("bare")) if v is not None)


def _carries_secret(m: re.Match[str]) -> bool:
    """A credential-named flag, key or assignment with a value that can be a secret: not a
    number or None, and for `name = value` a string literal or an env-style NAME (code such as
    `token = tokenizer.encode(x)` assigns no secret)."""
    value = _value(m)
    if value in _NOT_SECRET or value.startswith(MASK) or _NUMBER.fullmatch(value):
        return False
    if m.re is _ASSIGN and m.group("bare") is not None and not m.group("name").isupper():
        return False
    return secret_name(m.group("name"))


def _named_values(text: str) -> Iterable[str]:
    """The values that credential-named flags, assignments and keys carry in `text`."""
    for pattern in (_FLAG, _ASSIGN, _KEY_VALUE, _HEADER):
        yield from (_value(m) for m in pattern.finditer(text) if _carries_secret(m))


def learn_command(command: str) -> None:
    """Flag values, URL passwords and credential assignments on a command line."""
    remember(_named_values(command))
    remember(m.group(2) for m in _URL_PASSWORD.finditer(command))
    remember(m.group(2) for m in _AUTHORIZATION.finditer(command))


_learned_environ = False


def _learn_environ() -> None:
    global _learned_environ
    if not _learned_environ:
        _learned_environ = True
        learn_env(os.environ)


def mask_text(text: str) -> str:
    _learn_environ()
    for value in _known_longest_first():
        if value in text:
            text = text.replace(value, masked(value))
    if "://" in text:
        text = _URL_PASSWORD.sub(lambda m: m.group(1) + masked(m.group(2)) + m.group(3), text)
    text = _SHAPES.sub(lambda m: masked(m.group(0)), text)
    lowered = text.lower()
    if "bearer" in lowered or "authorization" in lowered:
        text = _AUTHORIZATION.sub(lambda m: m.group(1) + _masked_once(m.group(2)), text)
    if any(word in lowered for word in _NAME_WORDS):  # the named forms need such a name
        for pattern in (_FLAG, _ASSIGN, _KEY_VALUE, _HEADER):
            text = pattern.sub(_mask_named, text)
    return text


def _masked_once(value: str) -> str:
    return value if value.startswith(MASK) else masked(value)


_sorted_known: tuple[int, list[str]] = (0, [])


def _known_longest_first() -> list[str]:
    """Longest first, so a secret inside another leaves no part behind (sorted once per set)."""
    global _sorted_known
    if _sorted_known[0] != len(_known):
        _sorted_known = (len(_known), sorted(_known, key=len, reverse=True))
    return _sorted_known[1]


def _mask_named(m: re.Match[str]) -> str:
    if not _carries_secret(m):
        return m.group(0)
    value = _value(m)
    start, end = (
        m.span("sq")
        if m.group("sq") is not None
        else (m.span("dq") if m.group("dq") is not None else m.span("bare"))
    )
    whole = m.group(0)
    return whole[: start - m.start()] + masked(value) + whole[end - m.start() :]


def mask(value: Any) -> Any:
    """`value` with every secret masked: strings, dicts, lists and pydantic models, recursively
    (a model comes back as a new model of its type).

    A string under a credential-named key is masked whole; numbers are never secrets (counts
    such as `prompt_tokens`).
    """
    if isinstance(value, BaseModel):
        return type(value).model_validate(mask(value.model_dump()))
    if isinstance(value, str):
        return mask_text(value)
    if isinstance(value, Mapping):
        return {
            k: (
                masked(v)
                if isinstance(k, str)
                and isinstance(v, str)
                and v
                and secret_name(k)
                and not v.startswith(MASK)
                else mask(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return (
            type(value)(mask(v) for v in value)
            if isinstance(value, tuple)
            else [mask(v) for v in value]
        )
    return value


def mask_json(data: Any, indent: int | None = 2) -> str:
    """`data` as JSON with its values masked and its keys as they are: masking works on values,
    never on the syntax around them, so the text always parses back."""
    return json.dumps(mask(data), indent=indent, default=str)


def _mask_json_text(text: str, indent: int | None) -> str:
    """A JSON text masked value by value; as it was when nothing needed masking."""
    try:
        data = parse_json(text)
    except ValueError:
        return mask_text(text)  # not JSON after all
    clean = mask(data)
    return text if clean == data else json.dumps(clean, indent=indent, default=str)


def mask_file_text(name: str, text: str) -> str:
    """A file's text masked by what it holds: JSON (and JSON lines) value by value, anything
    else as text."""
    if name.endswith(".json"):
        return _mask_json_text(text, 2)
    if name.endswith(".jsonl"):
        lines = text.split("\n")
        return "\n".join(_mask_json_text(line, None) if line.strip() else line for line in lines)
    return mask_text(text)


def mask_files(folder: Path) -> None:
    """Every text file under `folder` rewritten with its secrets masked (server and bench logs
    hold what the server printed: its arguments, its environment, its errors)."""
    for path in sorted(folder.rglob("*")) if folder.is_dir() and not folder.is_symlink() else []:
        if path.is_file() and not path.is_symlink():
            try:
                text = path.read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue  # binary: not ours to read
            clean = mask_file_text(path.name, text)
            if clean != text:
                path.write_text(clean)
