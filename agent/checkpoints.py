"""The SQLite checkpointer, restricted to the types our state is made of (no arbitrary
deserialization from a checkpoint file).

LangGraph stores the whole state at every step; the candidates (thousands of hunks on a long
commit range), the hypotheses, the configurations, the links and the commit groups would be
stored again each time, changed or not. Each such value is kept once, by content, in the
`stored_texts` table of the same file, and a checkpoint holds only its reference.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, TypeAdapter

from tools.errors import ToolError
from tools.json_text import validate_json
from tools.repo.candidates import Candidate
from tools.secrets import mask, mask_text

STATE_TYPES = [
    ("agent.state", name)
    for name in (
        "InvestigationState",
        "Variant",
        "Launch",
        "Hypothesis",
        "Task",
        "PlannedLaunch",
        "Finding",
        "Confirmation",
        "Claim",
        "Bisection",
        "RangeState",
    )
] + [
    ("agent.relevance", "Facts"),
    ("agent.relevance", "Relevance"),
    ("agent.symptom", "Symptom"),
    ("agent.result", "ReproductionResult"),
    ("tools.repo.candidates", "Candidate"),
    ("tools.repo.commit_groups", "CommitGroups"),
    ("tools.repo.commit_groups", "RangeCommit"),
    ("tools.repo.merge_sides", "SideCommit"),
    ("tools.proc.import_trace", "ImportTrace"),
    ("tools.proc.worker_env", "WorkerEnv"),
    ("tools.proc.worker_env", "ProcessEnv"),
    ("tools.gpu.info", "GpuInfo"),
]

# a checkpoint's stand-ins: for a patch text (a patch itself starts with "diff --git" or "---"),
# and for a state channel's large value: "stored-sha256:KIND:DIGEST"
PATCH_REF = "patch-sha256:"
STORED_REF = "stored-sha256:"
CANDIDATES_REF = "candidates-sha256:"  # what checkpoints written before STORED_REF hold


class StoredTexts:
    """Texts by their SHA-256, in the checkpoint file, each write on a short connection of its
    own (autocommit, behind a lock): LangGraph serializes checkpoints on two threads, and a
    write on its connection from inside a serializer would race its transactions. A row is
    committed before the checkpoint that refers to it. Writes are rare: a list of candidates is
    one text."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.path = connection.execute("PRAGMA database_list").fetchone()[2]
        self.shared = connection  # an in-memory checkpointer has only the one connection
        self.lock = threading.Lock()
        self.texts: dict[str, str] = {}  # digests written or read through this connection
        self._run(
            "CREATE TABLE IF NOT EXISTS stored_texts (digest TEXT PRIMARY KEY, text TEXT NOT NULL)"
        )

    def _run(self, sql: str, *args: str) -> list[tuple]:
        with self.lock:
            if not self.path:
                return self.shared.execute(sql, args).fetchall()
            connection = sqlite3.connect(self.path, isolation_level=None, timeout=60)
            try:
                return connection.execute(sql, args).fetchall()
            finally:
                connection.close()

    def put(self, text: str) -> str:
        digest = hashlib.sha256(text.encode()).hexdigest()
        if digest not in self.texts:
            self._run(
                "INSERT OR IGNORE INTO stored_texts (digest, text) VALUES (?, ?)", digest, text
            )
            self.texts[digest] = text
        return digest

    def get(self, digest: str, what: str) -> str:
        if digest not in self.texts:
            rows = self._run("SELECT text FROM stored_texts WHERE digest = ?", digest)
            if not rows:
                raise ToolError(
                    f"the checkpoint refers to {what} it does not hold ({digest[:12]}): the "
                    "checkpoint file is damaged"
                )
            self.texts[digest] = rows[0][0]
        return self.texts[digest]


_CANDIDATE_LIST = TypeAdapter(list[Candidate])


def _stored_kinds() -> dict[str, tuple[TypeAdapter, Callable[[Any], bool]]]:
    """The values kept by content: each kind's type, and how to recognize a value of it."""
    from agent.relevance import Relevance
    from agent.state import Hypothesis, Link, Variant
    from tools.repo.commit_groups import CommitGroups

    def dict_of(model: type) -> Callable[[Any], bool]:
        return lambda v: (
            isinstance(v, dict) and bool(v) and all(isinstance(x, model) for x in v.values())
        )

    def list_of(model: type) -> Callable[[Any], bool]:
        return lambda v: isinstance(v, list) and bool(v) and all(isinstance(x, model) for x in v)

    return {
        "candidates": (_CANDIDATE_LIST, list_of(Candidate)),
        "hypotheses": (TypeAdapter(dict[str, Hypothesis]), dict_of(Hypothesis)),
        "configs": (TypeAdapter(dict[str, Variant]), dict_of(Variant)),
        "links": (TypeAdapter(list[Link]), list_of(Link)),
        "dropped": (TypeAdapter(list[Relevance]), list_of(Relevance)),
        "commits": (
            TypeAdapter(CommitGroups),
            lambda v: isinstance(v, CommitGroups) and bool(v.commits),
        ),
    }


class Compactor:
    """Large values out of a checkpoint and back: a channel's value of a stored kind (a node's
    write too) becomes one reference; a candidate inside a model keeps its fields but its
    patch text becomes a reference. What is stored is masked, once per distinct content."""

    def __init__(self, texts: StoredTexts) -> None:
        self.texts = texts
        self.refs: dict[str, str] = {}  # the digest of an unmasked text -> its reference
        self.kinds = _stored_kinds()

    def _ref(self, prefix: str, raw: str, masked: Callable[[], str]) -> str:
        key = hashlib.sha256(raw.encode()).hexdigest()
        if key not in self.refs:
            self.refs[key] = prefix + self.texts.put(masked())
        return self.refs[key]

    def compact(self, value: Any) -> Any:
        kind = next((k for k, (_, recognize) in self.kinds.items() if recognize(value)), None)
        if kind is None:
            return _each(value, self._patch_out, self.compact)
        adapter = self.kinds[kind][0]
        raw = adapter.dump_json(value).decode()
        return self._ref(
            f"{STORED_REF}{kind}:", raw, lambda: adapter.dump_json(mask(value)).decode()
        )

    def expand(self, value: Any) -> Any:
        if isinstance(value, str) and value.startswith(STORED_REF):
            kind, _, digest = value.removeprefix(STORED_REF).partition(":")
            if kind in self.kinds:
                return validate_json(self.kinds[kind][0], self.texts.get(digest, f"the {kind}"))
        if isinstance(value, str) and value.startswith(CANDIDATES_REF):
            text = self.texts.get(value.removeprefix(CANDIDATES_REF), "a list of candidates")
            return validate_json(_CANDIDATE_LIST, text)
        return _each(value, self._patch_in, self.expand)

    def _patch_out(self, candidate: Candidate) -> Candidate:
        patch = candidate.patch
        if not patch or patch.startswith(PATCH_REF):
            return candidate
        ref = self._ref(PATCH_REF, patch, lambda: mask_text(patch))
        return candidate.model_copy(update={"patch": ref})

    def _patch_in(self, candidate: Candidate) -> Candidate:
        if not candidate.patch.startswith(PATCH_REF):
            return candidate
        digest = candidate.patch.removeprefix(PATCH_REF)
        text = self.texts.get(digest, f"the patch text of candidate {candidate.id}")
        return candidate.model_copy(update={"patch": text})


def _each(value: Any, candidate: Callable[[Candidate], Candidate], inner: Callable) -> Any:
    """`value` with `candidate` applied to each Candidate and `inner` to the parts of dicts,
    lists and tuples; in a pydantic model only `candidate`, at any depth (a model's fields keep
    their types). What holds no candidate comes back as it was."""
    if isinstance(value, Candidate):
        return candidate(value)
    if isinstance(value, BaseModel):
        updates = {}
        walk = inner_only(candidate)
        for name in type(value).model_fields:
            field = getattr(value, name)
            new = walk(field)
            if new is not field:
                updates[name] = new
        return value.model_copy(update=updates) if updates else value
    if isinstance(value, dict):
        items = {k: inner(v) for k, v in value.items()}
        return items if any(items[k] is not v for k, v in value.items()) else value
    if isinstance(value, list | tuple):
        parts = [inner(v) for v in value]
        if all(new is old for new, old in zip(parts, value, strict=True)):
            return value
        return parts if isinstance(value, list) else tuple(parts)
    return value


def inner_only(candidate: Callable[[Candidate], Candidate]) -> Callable[[Any], Any]:
    """Inside a model: each candidate changed, lists of them kept as lists."""

    def walk(value: Any) -> Any:
        return _each(value, candidate, walk)

    return walk


def saver(connection: sqlite3.Connection):
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from langgraph.checkpoint.sqlite import SqliteSaver

    compactor = Compactor(StoredTexts(connection))

    class CheckpointSerializer(JsonPlusSerializer):
        """Checkpoints are files of the session too: what they store is masked first; patch
        texts are stored once and referred to."""

        def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
            return super().dumps_typed(mask(compactor.compact(obj)))

        def loads_typed(self, data: tuple[str, bytes]) -> Any:
            return compactor.expand(super().loads_typed(data))

    return SqliteSaver(connection, serde=CheckpointSerializer(allowed_msgpack_modules=STATE_TYPES))
