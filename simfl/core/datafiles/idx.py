"""IDX files (MNIST, Fashion-MNIST, EMNIST): headers, arrays and whole data sets.

A data set is four files (training and test images and labels), each plain or ``.gz``;
:func:`idx_info` reads only the headers and the label files, :func:`read_idx` the whole
set.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simfl.core.datafiles.common import (DataArrays, DataFileError, FileInfo, check_deflated,
                                         check_finite, check_labels, check_size, file_size,
                                         folder, read_bytes, read_head, stat_key)
from simfl.core.errors import ConfigError


#: IDX type codes (the magic number's third byte) and their big-endian numpy types
IDX_TYPES: dict[int, np.dtype[Any]] = {0x08: np.dtype(">u1"), 0x09: np.dtype(">i1"), 0x0B: np.dtype(">i2"),
             0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


@dataclass(frozen=True)
class IdxHeader:
    dtype: np.dtype[Any]
    dims: tuple[int, ...]

    @property
    def n_header_bytes(self) -> int:
        return 4 + 4 * len(self.dims)

    @property
    def n_data_bytes(self) -> int:
        return math.prod(self.dims) * self.dtype.itemsize


def parse_idx_header(head: bytes, path: Path) -> IdxHeader:
    """The header at the start of an IDX file: magic 0x0000, a type code, the number of
    dimensions, then each dimension as a big-endian uint32."""
    if len(head) < 4:
        raise DataFileError(path, f"not an IDX file: {len(head)} bytes, shorter than the header")
    if head[0] != 0 or head[1] != 0 or head[2] not in IDX_TYPES or head[3] == 0:
        raise DataFileError(path, f"not an IDX file: magic number 0x{head[:4].hex()} (expected "
                            "0x0000 followed by a type code 08, 09, 0b, 0c, 0d or 0e and the "
                            "number of dimensions)")
    n_dims = head[3]
    if len(head) < 4 + 4 * n_dims:
        raise DataFileError(path, f"truncated IDX header: {n_dims} dimensions announced, "
                            f"{len(head)} bytes in the file")
    dims = tuple(int(d) for d in np.frombuffer(head, dtype=">u4", count=n_dims, offset=4))
    return IdxHeader(IDX_TYPES[head[2]], dims)


def idx_header(path: Path) -> IdxHeader:
    """Read only the header of an IDX file (plain or ``.gz``) and check the size it
    declares against the file's size and :data:`~simfl.core.datafiles.MAX_DATA_BYTES`
    (a gzipped file: against what deflate can produce from its compressed bytes)."""
    header = parse_idx_header(read_head(path, 4 + 4 * 255), path)
    declared = header.n_header_bytes + header.n_data_bytes
    size = file_size(path)
    what = f"a header announcing {header.dims} values"
    if path.suffix == ".gz":
        check_deflated(path, declared, size, what)
        return header
    check_size(path, declared, what)
    found = size - header.n_header_bytes
    if found < header.n_data_bytes:
        raise DataFileError(path, f"truncated: the header announces {header.dims} values "
                            f"({header.n_data_bytes} bytes), the file holds {found}")
    if found > header.n_data_bytes:
        raise DataFileError(path, f"{found - header.n_data_bytes} bytes after the "
                            f"{header.dims} values the header announces")
    return header


def read_idx_array(path: Path) -> np.ndarray:
    """The whole array of an IDX file (plain or ``.gz``), in native byte order. The size
    the header declares is checked before anything is read; a gzipped file is never
    decompressed beyond it."""
    header = idx_header(path)
    raw = read_bytes(path, header.n_header_bytes + header.n_data_bytes)
    found = len(raw) - header.n_header_bytes
    if found != header.n_data_bytes:
        raise DataFileError(path, f"truncated: the header announces {header.dims} values "
                            f"({header.n_data_bytes} bytes), the file holds {found}")
    data = np.frombuffer(raw, dtype=header.dtype, offset=header.n_header_bytes)
    return data.reshape(header.dims).astype(header.dtype.newbyteorder("="))


#: the four IDX files of a data set: (split, part, number of dimensions)
_IDX_PARTS = (("train", "images", 3), ("train", "labels", 1),
              ("t10k", "images", 3), ("t10k", "labels", 1))


def _idx_contents(prefix: str) -> str:
    names = [f"{prefix}{split}-{part}-idx{n}-ubyte" for split, part, n in _IDX_PARTS]
    return (f"{', '.join(names[:3])} and {names[3]}, each plain or .gz, with 'test' "
            "allowed for 't10k' as in EMNIST")


def _idx_candidates(where: Path, prefix: str, split: str, part: str, n: int) -> list[Path]:
    splits = ("t10k", "test") if split == "t10k" else (split,)
    return [where / f"{prefix}{s}-{part}{sep}idx{n}-ubyte{gz}"
            for s in splits for sep in ("-", ".") for gz in ("", ".gz")]


def _idx_prefix(where: Path, prefix: str) -> str:
    """``prefix``, or when empty and the folder has no unprefixed set, the one prefix
    (``emnist-balanced-``) its files share."""
    if prefix or any(p.is_file() for p in _idx_candidates(where, "", "train", "images", 3)):
        return prefix
    found = sorted({p.name[:p.name.index("train-images")]
                    for p in where.glob("*train-images?idx3-ubyte*")})
    if len(found) > 1:
        raise ConfigError("task.dataset.prefix", prefix,
                          f"one of {', '.join(repr(f) for f in found)}: the folder {where} "
                          "holds several IDX data sets")
    return found[0] if found else prefix


def idx_prefix_problem(prefix: str) -> str | None:
    """Why ``prefix`` cannot be a file-name prefix (a path separator, a NUL), else None."""
    if any(c in prefix for c in ("/", "\\", "\0")):
        return "a file-name prefix such as 'emnist-balanced-', without path separators"
    return None


def idx_files(path: str, prefix: str = "") -> tuple[str, dict[tuple[str, str], Path]]:
    """The prefix in use and the four files of an IDX data set, by (split, part)."""
    problem = idx_prefix_problem(prefix)
    if problem:
        raise ConfigError("task.dataset.prefix", prefix, problem)
    where = folder(path, _idx_contents(prefix or ""))
    prefix = _idx_prefix(where, prefix)
    files = {}
    for split, part, n in _IDX_PARTS:
        candidates = _idx_candidates(where, prefix, split, part, n)
        found = [p for p in candidates if p.is_file()]
        if not found:
            raise DataFileError(candidates[0].with_name(candidates[0].name + "[.gz]"),
                                f"no such file (the folder must hold {_idx_contents(prefix)})")
        files[(split, part)] = found[0]
    return prefix, files


def _idx_transposed(prefix: str, transpose: bool | None) -> bool:
    return prefix.lower().startswith("emnist") if transpose is None else transpose


def idx_info(path: str, prefix: str = "", transpose: bool | None = None) -> FileInfo:
    """Shape, classes and sizes of an IDX data set from its four headers and its labels:
    every declared size is checked against its file, the label counts against the image
    counts, and the test images against the training images' size."""
    prefix, files = idx_files(path, prefix)
    counts = {}
    for split in ("train", "t10k"):
        images = _checked_idx_header(files[(split, "images")], 3)
        labels = _checked_idx_header(files[(split, "labels")], 1)
        if labels.dims[0] != images.dims[0]:
            raise DataFileError(files[(split, "labels")], f"{labels.dims[0]} labels for the "
                                f"{images.dims[0]} images of {files[(split, 'images')].name}")
        counts[split] = images
    if counts["train"].dims[1:] != counts["t10k"].dims[1:]:
        raise DataFileError(files[("t10k", "images")], "test images of another size than the "
                            "training images")
    n_classes = max(_idx_max_label(*stat_key(files[(s, "labels")])) for s in ("train", "t10k")) + 1
    _, height, width = counts["train"].dims
    if _idx_transposed(prefix, transpose):
        height, width = width, height
    return FileInfo((1, height, width), n_classes, counts["train"].dims[0],
                    counts["t10k"].dims[0])


def _checked_idx_header(path: Path, n_dims: int) -> IdxHeader:
    header = idx_header(path)
    _check_idx_dims(path, header, n_dims)
    return header


def _check_idx_dims(path: Path, header: IdxHeader, n_dims: int) -> None:
    what = "images (samples, height, width)" if n_dims == 3 else "labels (samples,)"
    if len(header.dims) != n_dims:
        raise DataFileError(path, f"holds a {len(header.dims)}-dimensional array {header.dims}; "
                            f"expected {n_dims}-dimensional {what}")
    if 0 in header.dims:
        raise DataFileError(path, f"holds an empty array {header.dims}; expected {what} "
                            "with at least one sample")
    if n_dims == 1 and header.dtype.kind not in "iu":
        raise DataFileError(path, f"labels of type {header.dtype.name}; expected integers")
    if n_dims == 3 and header.dtype.kind not in "uf":
        raise DataFileError(path, f"pixels of type {header.dtype.name}; expected unsigned "
                            "bytes (scaled to [0, 1]) or floats")


@functools.lru_cache(maxsize=32)
def _idx_max_label(path: str, mtime_ns: int, size: int) -> int:
    return int(_idx_labels(Path(path)).max())


def _idx_labels(path: Path) -> np.ndarray:
    labels = read_idx_array(path)
    _check_idx_dims(path, IdxHeader(labels.dtype, labels.shape), 1)
    return check_labels(path, "the labels", labels)


def read_idx(path: str, prefix: str = "", transpose: bool | None = None) -> DataArrays:
    """An IDX data set: the train files are the training split, the t10k (or test) files
    the test split. 8-bit pixels are scaled to [0, 1]; with ``transpose`` (by default for
    prefixes starting with ``emnist``) each image is transposed, undoing EMNIST's
    column-major storage."""
    idx_info(path, prefix, transpose)  # every header, size and label, before the images
    prefix, files = idx_files(path, prefix)
    flip = _idx_transposed(prefix, transpose)
    arrays = []
    for split in ("train", "t10k"):
        image_file, label_file = files[(split, "images")], files[(split, "labels")]
        images = read_idx_array(image_file)
        labels = _idx_labels(label_file)
        if len(labels) != len(images):
            raise DataFileError(label_file, f"{len(labels)} labels for the {len(images)} "
                                f"images of {image_file.name}")
        if flip:
            images = images.transpose(0, 2, 1)
        with np.errstate(over="ignore"):  # beyond float32's range: refused just below
            x = images.reshape(len(images), -1).astype(np.float32)
        if images.dtype == np.uint8:
            x /= np.float32(255.0)
        else:
            check_finite(image_file, "the images", x)
        arrays += [x, labels]
    return DataArrays(*arrays)
