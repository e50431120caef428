"""The SQLite checkpointer, restricted to the types our state is made of (no arbitrary
deserialization from a checkpoint file)."""

from __future__ import annotations

import sqlite3
from typing import Any

from tools.secrets import mask

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
    )
] + [
    ("agent.relevance", "Facts"),
    ("agent.relevance", "Relevance"),
    ("agent.symptom", "Symptom"),
    ("tools.repo.candidates", "Candidate"),
    ("tools.proc.import_trace", "ImportTrace"),
    ("tools.proc.worker_env", "WorkerEnv"),
    ("tools.proc.worker_env", "ProcessEnv"),
    ("tools.gpu.info", "GpuInfo"),
]


def saver(connection: sqlite3.Connection):
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from langgraph.checkpoint.sqlite import SqliteSaver

    class MaskingSerializer(JsonPlusSerializer):
        """Checkpoints are files of the session too: what they store is masked first."""

        def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
            return super().dumps_typed(mask(obj))

    return SqliteSaver(connection, serde=MaskingSerializer(allowed_msgpack_modules=STATE_TYPES))
