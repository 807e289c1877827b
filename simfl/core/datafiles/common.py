"""What every data file reader shares: the error, the records a reader returns, the
folder check and reading a file's bytes (plain or gzipped).

A reader names the file in every :class:`DataFileError`; :func:`stat_key` keys the
readers' caches of headers and labels so that a cache entry goes stale when its file
changes.
"""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simfl.core.errors import ConfigError, SimflError


class DataFileError(SimflError):
    """A data file that is missing or malformed; the message names the file."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = str(path)
        super().__init__(f"{path}: {problem}")


@dataclass(frozen=True)
class DataArrays:
    """A data set read from files: its training and test splits, flattened.

    ``groups`` gives each training sample's natural client (LEAF users), else None.
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    groups: np.ndarray | None = None


@dataclass(frozen=True)
class FileInfo:
    """What a data set's headers tell: one sample's shape, the classes, the training size."""

    input_shape: tuple[int, ...]
    n_classes: int
    n_train: int


def folder(path: str, holds: str) -> Path:
    """``path`` as an existing folder (``~`` expanded); ``holds`` says what it must contain."""
    if not path:
        raise ConfigError("task.dataset.path", path, f"the folder holding {holds}")
    where = Path(path).expanduser()
    if not where.exists():
        raise DataFileError(where, f"no such folder (it must hold {holds})")
    if not where.is_dir():
        raise DataFileError(where, f"not a folder (it must hold {holds})")
    return where


def stat_key(path: Path) -> tuple[str, int, int]:
    """A cache key that changes when the file does."""
    stat = path.stat()
    return str(path), stat.st_mtime_ns, stat.st_size


def read_bytes(path: Path) -> bytes:
    """The file's bytes, decompressed when its name ends in ``.gz``."""
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as f:
                return f.read()
        return path.read_bytes()
    except (OSError, EOFError, zlib.error) as err:
        raise DataFileError(path, f"cannot be read ({err})") from None


def read_head(path: Path, n_bytes: int) -> bytes:
    """The first ``n_bytes`` of the (decompressed) file; fewer when it is shorter."""
    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as f:
            return f.read(n_bytes)
    except (OSError, EOFError, zlib.error) as err:
        raise DataFileError(path, f"cannot be read ({err})") from None
