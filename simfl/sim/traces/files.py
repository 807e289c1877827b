"""Reading a trace file safely: regular files only, a byte cap, a line cap, UTF-8 text.

A directory, FIFO, socket or device is refused before anything blocks; a file larger
than the cap (when opened, or growing while read) is refused; a line longer than the
line cap is refused with its number. Every failure is one :class:`ConfigError` line
naming the file. The caps are arguments: :mod:`simfl.sim.traces.formats` passes its own.
"""

from __future__ import annotations

import io
import json
import os
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

from simfl.core.errors import ConfigError
from simfl.sim.traces.data import FIELD, bad_line, echo

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer


class _Capped(io.RawIOBase):
    """A raw file that refuses to yield more than ``limit`` bytes (a file that grows)."""

    def __init__(self, raw: io.FileIO, limit: int, path: str | Path) -> None:
        super().__init__()
        self._raw, self._limit, self._path, self._seen = raw, limit, path, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        n = self._raw.readinto(buffer) or 0
        self._seen += n
        if self._seen > self._limit:
            raise too_big(self._path, self._seen, self._limit)
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


def too_big(path: str | Path, size: int, max_bytes: int) -> ConfigError:
    """The error for a trace file of ``size`` bytes or more, over ``max_bytes``."""
    return ConfigError(FIELD, str(path), f"a trace file of at most {max_bytes} bytes "
                       f"(simfl.sim.traces.formats.MAX_TRACE_BYTES); this one has {size} or more")


@contextmanager
def open_text(path: str | Path, max_bytes: int) -> Iterator[io.TextIOWrapper]:
    """The UTF-8 text of the regular file at ``path``, opened without blocking on a FIFO
    and capped at ``max_bytes``."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:
        raise ConfigError(FIELD, str(path), f"a readable trace file ({err.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(FIELD, str(path), "a regular trace file (not a directory, FIFO, "
                              "socket or device)")
        if info.st_size > max_bytes:
            raise too_big(path, info.st_size, max_bytes)
        os.set_blocking(fd, True)
        raw = io.FileIO(fd, "r", closefd=True)
    except BaseException:
        os.close(fd)
        raise
    text = io.TextIOWrapper(io.BufferedReader(_Capped(raw, max_bytes, path)),
                            encoding="utf-8")
    try:
        yield text
    finally:
        text.close()


def decoded(path: str | Path, read: Callable[[], str]) -> str:
    """What ``read`` returns, with a decoding or reading failure as one line naming ``path``."""
    try:
        return read()
    except UnicodeDecodeError:
        raise ConfigError(FIELD, str(path), "a UTF-8 text trace file (binary files such as "
                          "pickles are never read)") from None
    except OSError as err:
        raise ConfigError(FIELD, str(path), f"a readable trace file ({err.strerror})") from None


@contextmanager
def numbered_lines(path: str | Path, max_bytes: int,
                   max_line_chars: int) -> Iterator[Iterator[tuple[int, str]]]:
    """(number, line) pairs of the file at ``path``, streamed; a line longer than
    ``max_line_chars`` is refused."""
    with open_text(path, max_bytes) as text:
        def numbered() -> Iterator[tuple[int, str]]:
            number = 0
            while True:
                line = decoded(path, lambda: text.readline(max_line_chars + 1))
                if not line:
                    return
                number += 1
                if len(line) > max_line_chars:
                    raise bad_line(str(path), number, line, f"a line of at most {max_line_chars} "
                                   "characters")
                yield number, line.rstrip("\r\n")

        yield numbered()


def json_value(path: str | Path, max_bytes: int) -> object:
    """The JSON value of the file at ``path`` (at most ``max_bytes``), one line on error."""
    with open_text(path, max_bytes) as text:
        raw = decoded(path, text.read)
    try:
        return json.loads(raw)
    except json.JSONDecodeError as err:
        raise ConfigError(FIELD, f"{path} line {err.lineno}", f"valid JSON ({err.msg})") from None
    except RecursionError:
        raise ConfigError(FIELD, str(path), "JSON nested less deeply (a list of devices, or "
                          "an object of clients)") from None
    except ValueError as err:  # e.g. an integer with thousands of digits
        raise ConfigError(FIELD, str(path), f"valid JSON ({echo(err)})") from None
