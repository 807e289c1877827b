"""Data given from Python: arrays in memory, or a map-style dataset materialised once.

:func:`ArrayData` keeps the arrays in this process under a digest of their contents and
returns the :class:`Arrays` config that names them, so a scenario stays a tree of plain
values (``config.json`` records the digest, the shapes and the classes, not the data).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from simfl.core.config.dataset.base import Dataset
from simfl.core.errors import ConfigError

#: the arrays :func:`ArrayData` was given in this process, by digest
_HELD: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}


@dataclass(frozen=True)
class Arrays(Dataset):
    """Arrays given from Python with ``simfl.ArrayData`` (their own test split).

    ``digest`` names arrays held by this process; a scenario that names arrays which
    this process was not given (a resumed run's ``config.json``) is an error: run the
    scenario script that makes them again.
    """

    kind = "arrays"
    own_test_split = True
    digest: str = ""

    def held(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(x_train, y_train, x_test, y_test): rows flattened, x float32, y int64."""
        try:
            return _HELD[self.digest]
        except KeyError:
            raise ConfigError("task.dataset.digest", self.digest or None,
                              "arrays given to simfl.ArrayData in this process (run the "
                              "scenario script that makes them)") from None

    def shape(self) -> tuple[int, int]:
        x, y, _, y_test = self.held()
        return x.shape[1], int(max(y.max(initial=0), y_test.max(initial=0))) + 1

    def input_shape(self) -> tuple[int, ...]:
        return _SHAPES[self.digest]


_SHAPES: dict[str, tuple[int, ...]] = {}


def ArrayData(x_train: Any, y_train: Any = None, x_test: Any = None,
              y_test: Any = None) -> Arrays:
    """A data set from Python: ``ArrayData(x_train, y_train, x_test, y_test)`` (numpy
    arrays or tensors; one sample's shape is x's shape after the first axis, e.g.
    ``(C, H, W)``; 8-bit pixels are scaled to [0, 1]; labels are 0 to the largest), or
    ``ArrayData(train_dataset, test_dataset)``: two map-style datasets
    (``torch.utils.data.Dataset``) of ``(x, label)`` items, materialised once here.

    Contiguous float32 features are kept without a copy (simfl only reads them): do not
    change the arrays after handing them over."""
    if x_test is None and y_test is None:
        (x_train, y_train), (x_test, y_test) = _materialise(x_train), _materialise(y_train)
    parts = [np.asarray(a) for a in (x_train, y_train, x_test, y_test)]
    for name, a, b in (("x", parts[0], parts[2]), ("y", parts[1], parts[3])):
        if a.dtype.hasobject or b.dtype.hasobject:
            raise ConfigError(f"ArrayData {name}", "object arrays", "numeric arrays")
    if len(parts[0]) != len(parts[1]) or len(parts[2]) != len(parts[3]) or not len(parts[0]):
        raise ConfigError("ArrayData", f"{len(parts[0])} x_train, {len(parts[1])} y_train, "
                          f"{len(parts[2])} x_test, {len(parts[3])} y_test",
                          "as many labels as samples in each split, and training samples")
    if parts[0].shape[1:] != parts[2].shape[1:]:
        raise ConfigError("ArrayData x_test", parts[2].shape[1:], f"samples of x_train's "
                          f"shape {parts[0].shape[1:]}")
    xs = [_features(x) for x in (parts[0], parts[2])]
    ys = [np.asarray(y, dtype=np.int64).reshape(-1) for y in (parts[1], parts[3])]
    if min(y.min() for y in ys) < 0:
        raise ConfigError("ArrayData y", "a negative label", "class labels 0, 1, ...")
    digest = hashlib.sha256()
    for a in (*xs, *ys):  # hashed through the buffer: no copy of a large array
        digest.update(np.ascontiguousarray(a).data.cast("B"))
    key = digest.hexdigest()[:32]
    _HELD[key] = (xs[0], ys[0], xs[1], ys[1])
    _SHAPES[key] = tuple(int(n) for n in parts[0].shape[1:]) or (1,)
    return Arrays(digest=key)


def _features(x: np.ndarray) -> np.ndarray:
    """Rows of float32 features: 8-bit pixels scaled to [0, 1]; contiguous float32 rows
    are kept as a view of the caller's array, not copied (the data may be most of the
    machine's memory; simfl only reads it)."""
    rows: np.ndarray = x.reshape(len(x), -1)
    if rows.dtype == np.uint8:
        return np.asarray(rows.astype(np.float32) / np.float32(255.0))
    return np.ascontiguousarray(rows, dtype=np.float32)


def _materialise(dataset: Any) -> tuple[np.ndarray, np.ndarray]:
    """Every ``(x, label)`` item of a map-style dataset, stacked."""
    items = [dataset[i] for i in range(len(dataset))]
    return (np.stack([np.asarray(x) for x, _ in items]),
            np.array([int(y) for _, y in items], dtype=np.int64))
