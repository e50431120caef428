"""The one base of every error a tool reports to the user as a single line."""

import errno

# a disk that is full or read-only is the user's to fix, not a bug of ours
STORAGE_ERRORS = {errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EACCES, errno.EPERM}


class ToolError(RuntimeError):
    pass


class BuildError(ToolError):
    """A state of the target that cannot be built or installed: unresolved, never a verdict."""
