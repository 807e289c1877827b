"""Models: the classifiers clients train, built from the data set's shape."""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.node import Choice, require
from simfl.core.config.papers import FEDAVG, MIFA


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
