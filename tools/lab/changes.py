"""One uncommitted change of a lab scenario, and how it is written into the working tree."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from tools.errors import ToolError

# a companion is no culprit, but a culprit's revert needs it reverted too to start at all
# (the definition a culprit calls, the module a culprit stopped importing)
Role = Literal["culprit", "decoy", "companion"]


class LabError(ToolError):
    """A lab could not be built or read; the message is for the user."""


class Change(BaseModel):
    """Replace `old` by `new` in `file` (an empty `old` on a missing file creates it; an empty
    `new` whose `old` is the whole file deletes it)."""

    file: str
    old: str
    new: str
    role: Role
    kind: str  # e.g. "unexecuted-backend", "allreduce-split", "env-not-propagated"
    why: str  # the ground truth, in one sentence

    def apply(self, root: Path) -> None:
        path = root / self.file
        if not self.old and not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(self.new)
            return
        text = path.read_text()
        if not self.new and text == self.old:
            path.unlink()
            return
        if text.count(self.old) != 1:
            raise LabError(
                f"lab template drift: {self.file} does not contain the text of "
                f"change {self.kind!r} exactly once"
            )
        path.write_text(text.replace(self.old, self.new))

    @property
    def marker(self) -> str:
        """A line of the change that identifies its hunk in `git diff`."""
        old_lines = set(self.old.splitlines())
        for line in self.new.splitlines():
            if line.strip() and line not in old_lines:
                return line
        return next(line for line in self.old.splitlines() if line.strip())


class EnvChange(BaseModel):
    """An environment variable that the bad launch sets and the good baseline does not."""

    name: str
    value: str
    role: Role
    kind: str
    why: str
