"""npz archives of your own arrays: x_train, y_train, x_test and y_test.

Archives are opened with ``allow_pickle=False``: an object array is refused, never
unpickled. Every member's ``.npy`` header is read first (:mod:`numpy.lib.format`) and
the size it declares checked against the member's size in the archive and the cap
:data:`~simfl.core.datafiles.MAX_DATA_BYTES` before its data are read. :func:`npz_info`
reads the labels and the headers only.
"""

from __future__ import annotations

import functools
import math
import struct
import zipfile
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from simfl.core.datafiles.common import (DataArrays, DataFileError, FileInfo, check_deflated,
                                         check_finite, check_labels, check_size, open_regular,
                                         stat_key)
from simfl.core.errors import ConfigError


NPZ_KEYS = ("x_train", "y_train", "x_test", "y_test")
_NPZ_CONTENTS = "an .npz archive of the arrays x_train, y_train, x_test and y_test"
#: what a damaged archive raises from zipfile, zlib or numpy's .npy reader (an encrypted
#: member is a RuntimeError, an unknown zip version a NotImplementedError)
_READ_ERRORS = (OSError, ValueError, EOFError, zlib.error, zipfile.BadZipFile, KeyError,
                NotImplementedError, RuntimeError, struct.error, OverflowError)


def _npz_file(path: str) -> Path:
    if not path:
        raise ConfigError("task.dataset.path", path, _NPZ_CONTENTS)
    where = Path(path).expanduser()
    if not where.is_file():
        raise DataFileError(where, f"no such file (task.dataset.path must name {_NPZ_CONTENTS})")
    return where


@contextmanager
def _npz_open(where: Path) -> Iterator[np.lib.npyio.NpzFile]:
    with open_regular(where) as raw:
        try:
            archive = np.load(raw, allow_pickle=False)
        except _READ_ERRORS as err:
            raise DataFileError(where, f"not an .npz archive ({err})") from None
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise DataFileError(where, f"a single .npy array; expected {_NPZ_CONTENTS}")
        with archive:
            missing = [k for k in NPZ_KEYS if k not in archive.files]
            if missing:
                raise DataFileError(where, f"lacks {', '.join(missing)} (it must hold "
                                    f"{', '.join(NPZ_KEYS)}; it holds "
                                    f"{', '.join(archive.files) or 'nothing'})")
            yield archive


def _npz_header(archive: np.lib.npyio.NpzFile, where: Path,
                key: str) -> tuple[tuple[int, ...], np.dtype[Any]]:
    """``key``'s shape and dtype from its .npy header, its declared size checked."""
    zf: zipfile.ZipFile = archive.zip  # type: ignore[assignment]
    try:
        member = zf.getinfo(f"{key}.npy")
        with zf.open(member) as f:
            version = np.lib.format.read_magic(f)
            read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                    else np.lib.format.read_array_header_2_0)
            shape, _, dtype = read(f)
            n_header = f.tell()
    except _READ_ERRORS as err:
        raise DataFileError(where, f"{key} has no readable .npy header ({err})") from None
    if dtype.hasobject:
        raise DataFileError(where, f"{key} is an object array (pickled data), which simfl "
                            "never loads; store numbers")
    declared = math.prod(shape) * dtype.itemsize
    what = f"{key}: a header announcing shape {shape} of {dtype.name}"
    if member.compress_type == zipfile.ZIP_STORED:
        check_size(where, declared, what)
    else:
        check_deflated(where, declared, member.compress_size, what)
    if n_header + declared != member.file_size:
        raise DataFileError(where, f"{what} ({declared:,} bytes), but the archive holds "
                            f"{member.file_size - n_header:,} bytes for it")
    return tuple(int(d) for d in shape), dtype


def _npz_array(archive: np.lib.npyio.NpzFile, where: Path, key: str) -> np.ndarray:
    _npz_header(archive, where, key)
    try:
        array: np.ndarray = archive[key]
        return array
    except _READ_ERRORS as err:
        raise DataFileError(where, f"{key} cannot be read ({err})") from None


def _npz_labels(archive: np.lib.npyio.NpzFile, where: Path) -> tuple[np.ndarray, np.ndarray]:
    y_train, y_test = (check_labels(where, key, _npz_array(archive, where, key))
                       for key in ("y_train", "y_test"))
    return y_train, y_test


def _npz_x_shapes(archive: np.lib.npyio.NpzFile, where: Path,
                  labels: tuple[np.ndarray, np.ndarray]) -> tuple[int, ...]:
    """One sample's shape, from the x arrays' headers, checked against the labels."""
    shapes = []
    for key, y in zip(("x_train", "x_test"), labels):
        shape, dtype = _npz_header(archive, where, key)
        if len(shape) < 2 or shape[0] != len(y) or math.prod(shape[1:]) == 0:
            raise DataFileError(where, f"{key} has shape {shape}; expected {len(y)} samples "
                                "(one per label) of at least one feature")
        if dtype.kind not in "biuf":
            raise DataFileError(where, f"{key} holds {dtype.name} values; expected numbers")
        shapes.append(shape[1:])
    if shapes[0] != shapes[1]:
        raise DataFileError(where, f"x_test samples have shape {shapes[1]}, x_train "
                            f"samples {shapes[0]}")
    return shapes[0]


def npz_info(path: str) -> FileInfo:
    """One sample's shape (x_train's shape after the first axis), the classes (the largest
    label + 1) and the sizes, reading the labels and the x arrays' headers."""
    where = _npz_file(path)
    return _npz_info(*stat_key(where))


@functools.lru_cache(maxsize=16)
def _npz_info(path: str, mtime_ns: int, size: int) -> FileInfo:
    where = Path(path)
    with _npz_open(where) as archive:
        labels = _npz_labels(archive, where)
        shape = _npz_x_shapes(archive, where, labels)
    n_classes = int(max(labels[0].max(), labels[1].max())) + 1
    return FileInfo(shape, n_classes, len(labels[0]), len(labels[1]))


def read_npz(path: str) -> DataArrays:
    """The four arrays of an npz archive. x arrays keep their sample shape (flattened per
    row); unsigned 8-bit values are taken as pixels and scaled to [0, 1], other numbers
    are cast to float32 as they are and must be finite."""
    where = _npz_file(path)
    with _npz_open(where) as archive:
        labels = _npz_labels(archive, where)
        _npz_x_shapes(archive, where, labels)
        xs = [_npz_array(archive, where, k) for k in ("x_train", "x_test")]
    flat = []
    for key, x in zip(("x_train", "x_test"), xs):
        with np.errstate(over="ignore"):  # beyond float32's range: refused just below
            rows = x.reshape(len(x), -1).astype(np.float32)
        if x.dtype == np.uint8:
            rows /= np.float32(255.0)
        flat.append(check_finite(where, key, rows))
    return DataArrays(flat[0], labels[0], flat[1], labels[1])
