"""Server optimisers (``server.optimizer``): what the server does with the aggregator's move."""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.checks import step_size
from simfl.core.config.node import Choice, Node, positive, require


_FEDOPT = "Reddi et al., Adaptive Federated Optimization, ICLR 2021, Algorithm 2"


def _decay(node: Node, *names: str) -> None:
    """Each of ``names`` is a decay factor in [0, 1)."""
    for name in names:
        value = getattr(node, name)
        require(0.0 <= value < 1.0, name, value, "a number in [0, 1)")


@dataclass(frozen=True)
class ServerOptimizer(Choice, point="server_optimizers"):
    """What the server does with the aggregator's move Delta = w_agg - w_old: w <- w_old + step.

    docs/algorithms.md §11. The identity (``none``, or ``sgd`` with lr = 1) keeps w_agg.
    """


@dataclass(frozen=True)
class NoServerOptimizer(ServerOptimizer):
    """No server optimiser: the model is the aggregator's (step = Delta)."""

    kind = "none"


@dataclass(frozen=True)
class ServerSgd(ServerOptimizer):
    """Plain server step size: step = lr * Delta (lr = 1: no change)."""

    kind = "sgd"
    paper = f"{_FEDOPT} (FedAvg with server learning rate)"
    lr: float = 1.0

    def validate(self) -> None:
        step_size(self, "lr")


@dataclass(frozen=True)
class FedAvgM(ServerOptimizer):
    """Server momentum: m <- beta m + Delta, step = lr * m."""

    kind = "fedavgm"
    paper = ("Hsu et al., Measuring the Effects of Non-Identical Data Distribution for "
             "Federated Visual Classification, arXiv 1909.06335, 2019 (FedAvgM)")
    lr: float = 1.0
    beta: float = 0.9

    def validate(self) -> None:
        step_size(self, "lr")
        _decay(self, "beta")


@dataclass(frozen=True)
class FedAdam(ServerOptimizer):
    """FedAdam: step = lr * m / (sqrt(v) + tau), v <- beta2 v + (1 - beta2) Delta^2."""

    kind = "fedadam"
    paper = f"{_FEDOPT} (FedAdam)"
    lr: float = 0.01
    beta1: float = 0.9
    beta2: float = 0.99
    tau: float = 1e-3

    def validate(self) -> None:
        step_size(self, "lr")
        positive(self, "tau")
        _decay(self, "beta1", "beta2")


@dataclass(frozen=True)
class FedYogi(FedAdam):
    """FedYogi: step = lr * m / (sqrt(v) + tau), v <- v - (1 - beta2) Delta^2 sign(v - Delta^2)."""

    kind = "fedyogi"
    paper = f"{_FEDOPT} (FedYogi)"


@dataclass(frozen=True)
class FedAdagrad(ServerOptimizer):
    """FedAdagrad: step = lr * m / (sqrt(v) + tau), v <- v + Delta^2."""

    kind = "fedadagrad"
    paper = f"{_FEDOPT} (FedAdagrad)"
    lr: float = 0.1
    beta1: float = 0.9
    tau: float = 1e-3

    def validate(self) -> None:
        step_size(self, "lr")
        positive(self, "tau")
        _decay(self, "beta1")
