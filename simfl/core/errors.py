"""Errors that simfl reports to users as a message, never as a traceback."""

from __future__ import annotations


class SimflError(Exception):
    """Base class for problems the user can fix (bad scenario, bad argument, bad file)."""


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

    def _message(self) -> str:
        where = self.field or "scenario"
        return f"{where} = {self.value!r} is not allowed: expected {self.allowed}."

    def within(self, prefix: str) -> "ConfigError":
        """The same error with ``prefix`` prepended to its field path."""
        field = f"{prefix}.{self.field}" if self.field else prefix
        return ConfigError(field, self.value, self.allowed)
