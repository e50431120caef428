"""A commit as the report names it (light: the result model reads it without git)."""

from __future__ import annotations

from pydantic import BaseModel


class CommitInfo(BaseModel):
    sha: str
    subject: str
    author: str  # "Name <email>"
    date: str  # the author date, ISO 8601 in UTC
    pr: int | None = None  # the pull request its subject names
    lines: int = 0  # how many of the hunk's changed lines it brought
