"""What every data file reader shares: the error, the records a reader returns, the
folder check, the caps on what a file may hold, and reading a file's bytes (plain or
gzipped) within those caps.

A reader names the file in every :class:`DataFileError`; :func:`stat_key` keys the
readers' caches of headers and labels so that a cache entry goes stale when its file
changes. Every file is opened by :func:`open_regular`: a directory, FIFO, socket or
device is refused before anything blocks, and no read returns more than
:data:`MAX_DATA_BYTES` (decompressed).
"""

from __future__ import annotations

import gzip
import os
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from simfl.core.errors import ConfigError, SimflError


#: the most bytes one data file may hold, decompressed (4 GiB)
MAX_DATA_BYTES = 2**32
#: the most bytes of one LEAF JSON file (a Python object per number costs several times
#: the text, so the cap is lower than for binary files)
MAX_JSON_BYTES = 2**29
#: the most classes a data set's labels may name (labels 0 to MAX_CLASSES - 1)
MAX_CLASSES = 2**20
#: deflate's largest compression ratio (about 1032:1), with room for headers: a gzipped or
#: zipped member claiming more than this per compressed byte cannot be genuine
MAX_DEFLATE_RATIO = 1100


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
    n_test: int = 0


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


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for binary reading when it is a regular file, without blocking on a
    FIFO (a directory, FIFO, socket or device such as /dev/zero is refused)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:
        raise DataFileError(path, f"cannot be read ({err.strerror})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise DataFileError(path, "not a regular file (a directory, FIFO, socket or device "
                                "is never read as data)")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def file_size(path: Path) -> int:
    """The size in bytes of the regular file at ``path``."""
    with open_regular(path) as f:
        return os.fstat(f.fileno()).st_size


def check_size(path: Path, n_bytes: int, what: str, cap: int | None = None) -> None:
    """Refuse ``n_bytes`` (of ``what`` the file holds or declares) over the cap."""
    cap = MAX_DATA_BYTES if cap is None else cap
    if n_bytes > cap:
        raise DataFileError(path, f"{what} of {n_bytes:,} bytes; simfl reads at most {cap:,} "
                            "bytes per data file (simfl.core.datafiles.MAX_DATA_BYTES, "
                            "MAX_JSON_BYTES for LEAF JSON)")


def check_deflated(path: Path, n_bytes: int, compressed_bytes: int, what: str) -> None:
    """Refuse a compressed file whose ``n_bytes`` (declared, decompressed) could not come
    from ``compressed_bytes`` of deflate, or exceed the cap."""
    check_size(path, n_bytes, what)
    if n_bytes > MAX_DEFLATE_RATIO * compressed_bytes + 4096:
        raise DataFileError(path, f"{what} of {n_bytes:,} bytes from {compressed_bytes:,} "
                            "compressed bytes: more than deflate can produce (a damaged or "
                            "crafted file)")


def read_bytes(path: Path, max_bytes: int | None = None) -> bytes:
    """The file's bytes, decompressed when its name ends in ``.gz``; more than
    ``max_bytes`` (by default :data:`MAX_DATA_BYTES`) is refused before it is held."""
    cap = MAX_DATA_BYTES if max_bytes is None else max_bytes
    with open_regular(path) as raw:
        try:
            if path.suffix != ".gz":
                check_size(path, os.fstat(raw.fileno()).st_size, "a file", cap)
                return raw.read(cap + 1)
            with gzip.GzipFile(fileobj=raw, mode="rb") as f:
                data = f.read(cap + 1)
        except (OSError, EOFError, zlib.error) as err:
            raise DataFileError(path, f"cannot be read ({err})") from None
    if len(data) > cap:
        raise DataFileError(path, f"decompresses to more than the {cap:,} bytes expected "
                            "(a damaged or crafted file)")
    return data


def read_head(path: Path, n_bytes: int) -> bytes:
    """The first ``n_bytes`` of the (decompressed) file; fewer when it is shorter."""
    with open_regular(path) as raw:
        try:
            if path.suffix == ".gz":
                with gzip.GzipFile(fileobj=raw, mode="rb") as f:
                    return f.read(n_bytes)
            return raw.read(n_bytes)
        except (OSError, EOFError, zlib.error) as err:
            raise DataFileError(path, f"cannot be read ({err})") from None


def check_labels(path: Path, key: str, labels: np.ndarray) -> np.ndarray:
    """``labels`` as int64 classes: a non-empty 1-D integer array of values 0 to
    :data:`MAX_CLASSES` - 1."""
    if labels.ndim != 1 or labels.dtype.kind not in "iu" or len(labels) == 0:
        raise DataFileError(path, f"{key} must be a non-empty 1-D array of integer classes "
                            f"(it is {labels.dtype.name} of shape {labels.shape})")
    low, high = int(labels.min()), int(labels.max())
    if low < 0 or high >= MAX_CLASSES:
        bad = low if low < 0 else high
        raise DataFileError(path, f"{key} holds the label {bad}; expected classes 0 to "
                            f"{MAX_CLASSES - 1:,} (simfl.core.datafiles.MAX_CLASSES)")
    return labels.astype(np.int64)


def check_finite(path: Path, key: str, x: np.ndarray) -> np.ndarray:
    """``x`` (float32 features), refused when a value is NaN or infinite (as float32)."""
    finite = np.isfinite(x)
    if not finite.all():
        bad = int(x.size - np.count_nonzero(finite))
        raise DataFileError(path, f"{key} holds {bad:,} non-finite values (NaN, or infinite "
                            "or beyond float32's range); every feature must be a finite number")
    return x
