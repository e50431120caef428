"""The one base of every error a tool reports to the user as a single line."""


class ToolError(RuntimeError):
    pass
