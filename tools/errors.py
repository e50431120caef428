"""The one base of every error a tool reports to the user as a single line."""

from __future__ import annotations

import errno
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pydantic is imported by what validates, not by every command's start
    from pydantic import ValidationError

# a disk that is full or read-only is the user's to fix, not a bug of ours
STORAGE_ERRORS = {errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EACCES, errno.EPERM}
# a path the system will not look up (too long, a loop of links) or that is not the kind of
# file named (a folder where a file belongs): the user's to change
PATH_ERRORS = {errno.ENAMETOOLONG, errno.ELOOP, errno.EISDIR, errno.ENOTDIR}


class ToolError(RuntimeError):
    pass


class BuildError(ToolError):
    """A state of the target that cannot be built or installed: unresolved, never a verdict."""


def first_problem(e: ValidationError) -> str:
    """The first thing pydantic found wrong, where it is: `budget.max_launches: Input should
    be a valid integer`."""
    problems = e.errors()
    if not problems:
        return str(e)
    where = ".".join(str(part) for part in problems[0]["loc"])
    message = problems[0]["msg"].removeprefix("Value error, ")
    return f"{where}: {message}" if where else message
