"""npz archives of your own arrays: x_train, y_train, x_test and y_test.

Archives are opened with ``allow_pickle=False``: an object array is refused, never
unpickled. :func:`npz_info` reads the labels and x_train's ``.npy`` header only.
"""

from __future__ import annotations

import functools
import zipfile
import zlib
from pathlib import Path

import numpy as np

from simfl.core.datafiles.common import DataArrays, DataFileError, FileInfo, stat_key
from simfl.core.errors import ConfigError


NPZ_KEYS = ("x_train", "y_train", "x_test", "y_test")
_NPZ_CONTENTS = "an .npz archive of the arrays x_train, y_train, x_test and y_test"


def _npz_file(path: str) -> Path:
    if not path:
        raise ConfigError("task.dataset.path", path, _NPZ_CONTENTS)
    where = Path(path).expanduser()
    if not where.is_file():
        raise DataFileError(where, f"no such file (task.dataset.path must name {_NPZ_CONTENTS})")
    return where


def _npz_open(where: Path) -> np.lib.npyio.NpzFile:
    try:
        archive = np.load(where, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        raise DataFileError(where, f"not an .npz archive ({err})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise DataFileError(where, f"a single .npy array; expected {_NPZ_CONTENTS}")
    missing = [k for k in NPZ_KEYS if k not in archive.files]
    if missing:
        archive.close()
        raise DataFileError(where, f"lacks {', '.join(missing)} (it must hold "
                            f"{', '.join(NPZ_KEYS)}; it holds {', '.join(archive.files) or 'nothing'})")
    return archive


def _npz_array(archive: np.lib.npyio.NpzFile, where: Path, key: str) -> np.ndarray:
    try:
        array: np.ndarray = archive[key]
        return array
    except ValueError as err:
        if "pickle" in str(err):
            raise DataFileError(where, f"{key} is an object array (pickled data), which simfl "
                                "never loads; store numbers") from None
        raise DataFileError(where, f"{key} cannot be read ({err})") from None
    except (OSError, EOFError, zlib.error, zipfile.BadZipFile) as err:
        raise DataFileError(where, f"{key} cannot be read ({err})") from None


def _npz_labels(archive: np.lib.npyio.NpzFile, where: Path) -> tuple[np.ndarray, np.ndarray]:
    out = []
    for key in ("y_train", "y_test"):
        y = _npz_array(archive, where, key)
        if y.ndim != 1 or y.dtype.kind not in "iu" or len(y) == 0 or y.min() < 0:
            raise DataFileError(where, f"{key} must be a non-empty 1-D array of integer classes "
                                f">= 0 (it is {y.dtype.name} of shape {y.shape})")
        out.append(y.astype(np.int64))
    return out[0], out[1]


def _npz_x_shape(archive: np.lib.npyio.NpzFile, where: Path) -> tuple[int, ...]:
    """x_train's shape from its .npy header, without reading its data."""
    try:
        with archive.zip.open("x_train.npy") as f:  # type: ignore[union-attr]
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                return np.lib.format.read_array_header_1_0(f)[0]
            if version == (2, 0):
                return np.lib.format.read_array_header_2_0(f)[0]
    except (OSError, ValueError, EOFError, zlib.error, zipfile.BadZipFile, KeyError):
        pass
    return _npz_array(archive, where, "x_train").shape


def npz_info(path: str) -> FileInfo:
    """One sample's shape (x_train's shape after the first axis), the classes (the largest
    label + 1) and the training size, reading the labels and x_train's header."""
    where = _npz_file(path)
    return _npz_info(*stat_key(where))


@functools.lru_cache(maxsize=16)
def _npz_info(path: str, mtime_ns: int, size: int) -> FileInfo:
    where = Path(path)
    with _npz_open(where) as archive:
        y_train, y_test = _npz_labels(archive, where)
        shape = tuple(int(d) for d in _npz_x_shape(archive, where))
    if len(shape) < 2:
        raise DataFileError(where, f"x_train has shape {shape}; expected (samples, features...)")
    n_classes = int(max(y_train.max(), y_test.max())) + 1
    return FileInfo(shape[1:], n_classes, len(y_train))


def read_npz(path: str) -> DataArrays:
    """The four arrays of an npz archive. x arrays keep their sample shape (flattened per
    row); unsigned 8-bit values are taken as pixels and scaled to [0, 1], other numbers
    are cast to float32 as they are."""
    where = _npz_file(path)
    with _npz_open(where) as archive:
        y_train, y_test = _npz_labels(archive, where)
        xs = [_npz_array(archive, where, k) for k in ("x_train", "x_test")]
    for key, x, y in zip(("x_train", "x_test"), xs, (y_train, y_test)):
        if x.ndim < 2 or len(x) != len(y):
            raise DataFileError(where, f"{key} has shape {x.shape}; expected {len(y)} samples "
                                "(one per label) of at least one feature")
        if x.dtype.kind not in "biuf":
            raise DataFileError(where, f"{key} holds {x.dtype.name} values; expected numbers")
    if xs[0].shape[1:] != xs[1].shape[1:]:
        raise DataFileError(where, f"x_test samples have shape {xs[1].shape[1:]}, x_train "
                            f"samples {xs[0].shape[1:]}")
    flat = []
    for x in xs:
        rows = x.reshape(len(x), -1).astype(np.float32)
        if x.dtype == np.uint8:
            rows /= np.float32(255.0)
        flat.append(rows)
    return DataArrays(flat[0], y_train, flat[1], y_test)
