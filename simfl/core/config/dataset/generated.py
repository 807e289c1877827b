"""Data sets generated from their parameters: blobs, Synthetic(alpha, beta) and quadratics.

Gaussian blobs (scikit-learn's make_blobs), FedProx's per-client Synthetic(alpha, beta)
and the toy quadratic objectives for analytic checks.
"""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.checks import non_negative, positive, require
from simfl.core.config.dataset.base import Dataset


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
