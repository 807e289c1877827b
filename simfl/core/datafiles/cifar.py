"""The binary version of CIFAR-10 and CIFAR-100: fixed-size records of label bytes and pixels.

The pickled "python version" is recognised and refused (unpickling a data file can run
arbitrary code). :func:`cifar_info` reads only file sizes, :func:`read_cifar` the records.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simfl.core.datafiles.common import (DataArrays, DataFileError, FileInfo, check_size,
                                         file_size, folder, open_regular, read_bytes)


@dataclass(frozen=True)
class _CifarLayout:
    sub: str              # the folder the archive unpacks to
    train: tuple[str, ...]
    test: str
    label_bytes: int
    pickled: tuple[str, ...]  # names that mark the pickled "python version"
    archive: str


_CIFAR10 = _CifarLayout("cifar-10-batches-bin", tuple(f"data_batch_{i}.bin" for i in range(1, 6)),
                        "test_batch.bin", 1,
                        ("cifar-10-batches-py", "data_batch_1", "test_batch", "batches.meta"),
                        "cifar-10-binary.tar.gz")
_CIFAR100 = _CifarLayout("cifar-100-binary", ("train.bin",), "test.bin", 2,
                         ("cifar-100-python", "train", "test", "meta"), "cifar-100-binary.tar.gz")
#: pixels per CIFAR image: 1024 red, then 1024 green, then 1024 blue, each row by row
CIFAR_PIXELS = 3 * 32 * 32


def _cifar_layout(hundred: bool) -> _CifarLayout:
    return _CIFAR100 if hundred else _CIFAR10


def _cifar_contents(layout: _CifarLayout) -> str:
    return (f"{', '.join(layout.train)} and {layout.test} from {layout.archive} (or the "
            f"{layout.sub} folder they unpack to)")


def cifar_files(path: str, hundred: bool) -> tuple[list[Path], Path]:
    """The training files and the test file of the binary version of CIFAR-10/100."""
    layout = _cifar_layout(hundred)
    where = folder(path, _cifar_contents(layout))
    if (where / layout.sub).is_dir():
        where = where / layout.sub
    name = "CIFAR-100" if hundred else "CIFAR-10"
    for wanted in (*layout.train, layout.test):
        if not (where / wanted).is_file():
            pickled = [where / p for p in layout.pickled
                       if ((where / p).is_dir() if p.startswith("cifar-") else (where / p).is_file())]
            if pickled:
                raise DataFileError(pickled[0], f"this is {name}'s pickled \"python version\", "
                                    "which simfl refuses to read: unpickling a data file can run "
                                    f"arbitrary code. Download the binary version "
                                    f"({layout.archive}) and set task.dataset.path to the "
                                    f"{layout.sub} folder it unpacks to")
            raise DataFileError(where / wanted, f"no such file (the folder must hold "
                                f"{_cifar_contents(layout)})")
    return [where / f for f in layout.train], where / layout.test


def _cifar_records(path: Path, layout: _CifarLayout) -> int:
    record = layout.label_bytes + CIFAR_PIXELS
    size = file_size(path)
    check_size(path, size, "a file")
    n, rest = divmod(size, record)
    if rest or n == 0:
        raise DataFileError(path, f"{size} bytes is not a whole, non-zero "
                            f"number of {record}-byte records: truncated, or not the binary "
                            "version of CIFAR")
    return n


def cifar_info(path: str, hundred: bool, fine: bool = True) -> FileInfo:
    """Shape, classes and sizes of a CIFAR folder, from its file sizes (each at most
    :data:`~simfl.core.datafiles.MAX_DATA_BYTES`)."""
    layout = _cifar_layout(hundred)
    train, test = cifar_files(path, hundred)
    n_train = sum(_cifar_records(p, layout) for p in train)
    n_test = _cifar_records(test, layout)
    return FileInfo((3, 32, 32), (100 if fine else 20) if hundred else 10, n_train, n_test)


def cifar_check(path: str, hundred: bool, fine: bool = True) -> FileInfo:
    """:func:`cifar_info`, and every record's label in range: the label bytes are read
    through a memory map, the pixels never held."""
    info = cifar_info(path, hundred, fine)
    layout = _cifar_layout(hundred)
    train, test = cifar_files(path, hundred)
    for file in (*train, test):
        n = _cifar_records(file, layout)
        with open_regular(file) as f:
            records = np.memmap(f, dtype=np.uint8, mode="r", shape=(n, layout.label_bytes
                                                                    + CIFAR_PIXELS))
            _check_cifar_labels(file, records[:, 1 if hundred and fine else 0], info.n_classes)
            del records
    return info


def _check_cifar_labels(path: Path, labels: np.ndarray, n_classes: int) -> None:
    if labels.max() >= n_classes:
        bad = int(np.argmax(labels >= n_classes))
        raise DataFileError(path, f"record {bad} has label {int(labels[bad])}; expected "
                            f"0 to {n_classes - 1}: not the binary version of this CIFAR")


def _read_cifar_files(files: list[Path], layout: _CifarLayout, label_at: int,
                      n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    counts = [_cifar_records(p, layout) for p in files]
    x = np.empty((sum(counts), CIFAR_PIXELS), dtype=np.float32)
    y = np.empty(sum(counts), dtype=np.int64)
    start = 0
    for path, n in zip(files, counts):
        raw = read_bytes(path)
        if len(raw) != n * (layout.label_bytes + CIFAR_PIXELS):
            raise DataFileError(path, "changed while it was read")
        records = np.frombuffer(raw, dtype=np.uint8).reshape(n, -1)
        labels = records[:, label_at]
        _check_cifar_labels(path, labels, n_classes)
        x[start:start + n] = records[:, layout.label_bytes:]
        y[start:start + n] = labels
        start += n
    x /= np.float32(255.0)
    return x, y


def read_cifar(path: str, hundred: bool, fine: bool = True) -> DataArrays:
    """The binary version of CIFAR-10 (``data_batch_1.bin`` ... ``data_batch_5.bin``,
    ``test_batch.bin``: records of one label byte and 3,072 pixel bytes) or CIFAR-100
    (``train.bin``, ``test.bin``: a coarse and a fine label byte, then the pixels).
    Images come out channel-first (3, 32, 32), as stored, scaled to [0, 1]."""
    layout = _cifar_layout(hundred)
    train, test = cifar_files(path, hundred)
    label_at = 1 if hundred and fine else 0
    n_classes = (100 if fine else 20) if hundred else 10
    x_train, y_train = _read_cifar_files(train, layout, label_at, n_classes)
    x_test, y_test = _read_cifar_files([test], layout, label_at, n_classes)
    return DataArrays(x_train, y_train, x_test, y_test)
