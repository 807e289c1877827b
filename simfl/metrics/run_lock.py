"""One writer per run folder: an advisory lock on its ``run.lock``, held while a run that
writes checkpoints, or a resumed run, goes on (the system frees it if the process dies)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

from simfl.core.errors import OutputError, SimflError

LOCK_NAME = "run.lock"


class RunInUse(SimflError):
    """Another simfl process holds the run folder's lock."""


class RunLock:
    """The lock on ``folder``'s run; :meth:`release` (or the process's end) frees it."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._handle: IO[str] | None = None

    def acquire(self) -> "RunLock":
        """Take the lock, or raise a one-line :class:`SimflError` when another simfl
        process holds it."""
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock
            return self
        path = self.folder / LOCK_NAME
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as err:
            raise OutputError(f"cannot open the lock {path}: {err.strerror or err}") from None
        handle = os.fdopen(fd, "r+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise RunInUse(f"{self.folder} is in use by another simfl run or resume") from None
        self._handle = handle
        return self

    def release(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
