"""The SQLite checkpointer, restricted to the types our state is made of (no arbitrary
deserialization from a checkpoint file)."""

from __future__ import annotations

import sqlite3

STATE_TYPES = [
    ("agent.state", name) for name in (
        "InvestigationState", "Config", "Launch", "Hypothesis", "Task", "Request", "Finding",
        "Confirmation", "Claim")
] + [("agent.relevance", "Facts"), ("agent.relevance", "Relevance"),
     ("agent.symptom", "Symptom"), ("tools.candidates", "Candidate"),
     ("tools.import_trace", "ImportTrace"), ("tools.worker_env", "WorkerEnv"),
     ("tools.worker_env", "ProcessEnv")]


def saver(connection: sqlite3.Connection):
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from langgraph.checkpoint.sqlite import SqliteSaver

    return SqliteSaver(connection, serde=JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES))
