"""Errors that simfl reports to users as a message, never as a traceback."""

from __future__ import annotations


#: the most characters of a rejected value that a message repeats (its start and end)
MAX_ECHO_CHARS = 200


def echo(value: object) -> str:
    """``repr(value)``; a long one keeps its start and end (where a file's line number
    and the offending text are) and says how long it was."""
    try:
        text = repr(value)
    except (RecursionError, ValueError):  # deeply nested, or an int too long to print
        text = f"<{type(value).__name__}>"
    if len(text) > MAX_ECHO_CHARS:
        head, tail = MAX_ECHO_CHARS * 2 // 3, MAX_ECHO_CHARS // 3
        text = f"{text[:head]} ... {text[-tail:]} ({len(text):,} characters)"
    return text


class SimflError(Exception):
    """Base class for problems the user can fix (bad scenario, bad argument, bad file).

    ``exit_status`` is the command line's exit status for it: 2 (invalid input).
    """

    exit_status = 2


class OutputError(SimflError):
    """The run directory could not be written (disk full, read-only folder...): exit 1."""

    exit_status = 1


class ConfigError(SimflError):
    """An invalid scenario value.

    Parameters
    ----------
    field:
        Dotted path of the offending field (``"server.deadline_s"``); may be empty
        while the error travels up through nested sections, which prefix it.
    value:
        The value that was rejected.
    allowed:
        What would have been accepted, in words (``"a number > 0"``).
    """

    def __init__(self, field: str, value: object, allowed: str) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(self._message())
        # ``type(err)(*err.args)`` rebuilds it (SimPy does so when a process fails; pickling)
        self.args = (field, value, allowed)

    def __str__(self) -> str:
        return self._message()

    def _message(self) -> str:
        where = self.field or "scenario"
        return f"{where} = {echo(self.value)} is not allowed: expected {self.allowed}."

    def within(self, prefix: str) -> "ConfigError":
        """The same error with ``prefix`` prepended to its field path."""
        field = f"{prefix}.{self.field}" if self.field else prefix
        return ConfigError(field, self.value, self.allowed)
