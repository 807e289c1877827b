"""Data sets read from files in a local folder: IDX, binary CIFAR, LEAF JSON and npz.

:mod:`simfl.core.datafiles` reads them. Each holds its own test split; ``shape`` comes
from headers, file sizes or label files, without loading the samples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from simfl.core import datafiles
from simfl.core.config.checks import require
from simfl.core.config.dataset.base import Dataset


@dataclass(frozen=True)
class Idx(Dataset):
    """MNIST, Fashion-MNIST or EMNIST from IDX files in a local folder (plain or gzipped).

    ``path`` is the folder holding ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
    ``t10k-images-idx3-ubyte`` and ``t10k-labels-idx1-ubyte`` (each may end in ``.gz``;
    ``test`` may stand for ``t10k``). ``prefix`` selects a set whose names carry one, such
    as ``emnist-balanced-``; left empty, the folder's only prefixed set is found by itself.
    EMNIST stores each image transposed: ``transpose`` flips them back, by default (null)
    exactly when the prefix starts with ``emnist``. The t10k files are the test split
    (``task.test_fraction`` is not used). The classes are 0 to the largest label; EMNIST
    letters (labels 1 to 26) so has 27 outputs, one never used.
    """

    kind = "idx"
    paper = ("LeCun et al., Gradient-Based Learning Applied to Document Recognition, Proc. "
             "IEEE 1998 (MNIST); Xiao et al., Fashion-MNIST, arXiv 1708.07747, 2017; Cohen et "
             "al., EMNIST: an extension of MNIST to handwritten letters, arXiv 1702.05373, 2017")
    own_test_split = True
    path: str = ""
    prefix: str = ""
    transpose: bool | None = None

    def validate(self) -> None:
        problem = datafiles.idx_prefix_problem(self.prefix)
        require(problem is None, "prefix", self.prefix, problem or "")

    def info(self) -> datafiles.FileInfo:
        return datafiles.idx_info(self.path, self.prefix, self.transpose)

    def shape(self) -> tuple[int, int]:
        info = self.info()
        return math.prod(info.input_shape), info.n_classes

    def input_shape(self) -> tuple[int, ...]:
        return self.info().input_shape


_CIFAR = "Krizhevsky, Learning Multiple Layers of Features from Tiny Images, tech. report, 2009"


@dataclass(frozen=True)
class Cifar10(Dataset):
    """CIFAR-10 from its binary version in a local folder (32x32 colour images, 10 classes).

    ``path`` is the ``cifar-10-batches-bin`` folder (or the folder holding it) with
    ``data_batch_1.bin`` to ``data_batch_5.bin`` and ``test_batch.bin``. The pickled
    "python version" is refused: simfl never unpickles a data file. ``test_batch.bin`` is
    the test split (``task.test_fraction`` is not used).
    """

    kind = "cifar10"
    paper = _CIFAR
    own_test_split = True
    path: str = ""

    def shape(self) -> tuple[int, int]:
        return datafiles.CIFAR_PIXELS, 10

    def input_shape(self) -> tuple[int, ...]:
        return 3, 32, 32


@dataclass(frozen=True)
class Cifar100(Dataset):
    """CIFAR-100 from its binary version in a local folder (100 fine or 20 coarse classes).

    ``path`` is the ``cifar-100-binary`` folder (or the folder holding it) with
    ``train.bin`` and ``test.bin``; ``label`` picks the ``fine`` (100) or ``coarse`` (20)
    labels. The pickled "python version" is refused. ``test.bin`` is the test split.
    """

    kind = "cifar100"
    paper = _CIFAR
    own_test_split = True
    path: str = ""
    label: Literal["fine", "coarse"] = "fine"

    def shape(self) -> tuple[int, int]:
        return datafiles.CIFAR_PIXELS, 100 if self.label == "fine" else 20

    def input_shape(self) -> tuple[int, ...]:
        return 3, 32, 32


@dataclass(frozen=True)
class Leaf(Dataset):
    """LEAF's FEMNIST or Shakespeare JSON files, one client per LEAF user (natural non-IID).

    ``path`` is LEAF's ``data`` folder of a benchmark (holding ``train/`` and ``test/``
    of ``*.json``), or the folder above it. The run's ``task.n_clients`` clients are the
    first users with training samples (files in name order, users in file order), so
    ``n_clients`` may not exceed the users in the files; with the ``native`` partition
    each keeps its own samples, another partition pools and re-splits the same samples.
    The test split is those users' samples in the test files (``task.test_fraction`` is
    not used). ``femnist``: 28x28 images, 62 classes. ``shakespeare``: 80-character
    strings as int64 tokens (positions in LEAF's 80-character alphabet; characters outside
    it read as spaces, with a warning), the label the next character (80 classes).
    """

    kind = "leaf"
    paper = "Caldas et al., LEAF: A Benchmark for Federated Settings, arXiv 1812.01097, 2018"
    own_test_split = True
    path: str = ""
    benchmark: Literal["femnist", "shakespeare"] = "femnist"

    @property
    def tokens(self) -> bool:  # type: ignore[override]
        return self.benchmark == "shakespeare"

    def shape(self) -> tuple[int, int]:
        if self.benchmark == "shakespeare":
            return datafiles.SHAKESPEARE_LENGTH, len(datafiles.LEAF_ALPHABET)
        return datafiles.FEMNIST_PIXELS, datafiles.FEMNIST_CLASSES

    def input_shape(self) -> tuple[int, ...]:
        return (datafiles.SHAKESPEARE_LENGTH,) if self.benchmark == "shakespeare" else (1, 28, 28)


@dataclass(frozen=True)
class Npz(Dataset):
    """Your own arrays: an .npz archive of x_train, y_train, x_test and y_test.

    ``path`` names the archive (``numpy.savez`` or ``savez_compressed``); it is opened
    without unpickling, so object arrays are refused. One sample's shape is x_train's
    shape after the first axis (``(1, 28, 28)`` for images stored as ``[N, 1, 28, 28]``),
    the classes are 0 to the largest label, 8-bit arrays are pixels scaled to [0, 1] and
    other numbers are used as they are. x_test and y_test are the test split
    (``task.test_fraction`` is not used).
    """

    kind = "npz"
    own_test_split = True
    path: str = ""

    def shape(self) -> tuple[int, int]:
        info = datafiles.npz_info(self.path)
        return math.prod(info.input_shape), info.n_classes

    def input_shape(self) -> tuple[int, ...]:
        return datafiles.npz_info(self.path).input_shape
