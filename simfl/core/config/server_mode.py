"""When the server applies updates (``server.mode``): synchronous rounds, FedAsync, FedBuff."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from simfl.core.config.checks import step_size
from simfl.core.config.node import MAX_CLIENTS, Choice, at_most, non_negative, positive, require
from simfl.core.config.papers import FEDAVG


@dataclass(frozen=True)
class ServerMode(Choice, point="server_modes"):
    """When the server applies client updates: in rounds, or as they arrive.

    ``concurrency`` (async and buffered) is the number of clients kept working at all
    times; None means ``server.clients_per_round``.
    """

    @property
    def synchronous(self) -> bool:
        """Whether the server works in rounds (deadline or k arrivals, then aggregate)."""
        return False


@dataclass(frozen=True)
class SyncMode(ServerMode):
    """Synchronous rounds: invite, wait for the deadline or the arrivals, aggregate."""

    kind = "sync"
    paper = FEDAVG

    @property
    def synchronous(self) -> bool:
        return True


FEDASYNC = "Xie, Koyejo, Gupta, Asynchronous Federated Optimization, arXiv 1903.03934, 2019"
FEDBUFF = ("Nguyen et al., Federated Learning with Buffered Asynchronous Aggregation, "
           "AISTATS 2022")

#: staleness functions s(tau) of the asynchronous modes (docs/algorithms.md §10)
StalenessKind = Literal["constant", "polynomial", "hinge"]


def _validate_mode_fields(mode: "AsyncMode | BufferedMode") -> None:
    positive(mode, "concurrency")
    at_most(mode, MAX_CLIENTS, "concurrency")
    non_negative(mode, "staleness_a", "staleness_b")
    if mode.staleness == "hinge":
        positive(mode, "staleness_a")


@dataclass(frozen=True)
class AsyncMode(ServerMode):
    """FedAsync: apply each arrival at once, w <- (1 - alpha s(tau)) w + alpha s(tau) w_client.

    ``staleness`` picks s: ``constant`` 1, ``polynomial`` (tau + 1)^-a, ``hinge`` 1 if
    tau <= b else 1 / (a (tau - b) + 1), with a = ``staleness_a``, b = ``staleness_b``.
    """

    kind = "async"
    paper = FEDASYNC
    concurrency: int | None = None
    alpha: float = 0.6
    staleness: StalenessKind = "polynomial"
    staleness_a: float = 0.5
    staleness_b: float = 4.0

    def validate(self) -> None:
        require(0.0 < self.alpha <= 1.0, "alpha", self.alpha, "a mixing weight in (0, 1]")
        _validate_mode_fields(self)


@dataclass(frozen=True)
class BufferedMode(ServerMode):
    """FedBuff: buffer s(tau) * delta of each arrival; every K arrivals w <- w + eta_g mean.

    K = ``buffer_size``, eta_g = ``server_lr``; ``staleness`` as in ``async``.
    """

    kind = "buffered"
    paper = FEDBUFF
    concurrency: int | None = None
    buffer_size: int = 10
    server_lr: float = 1.0
    staleness: StalenessKind = "polynomial"
    staleness_a: float = 0.5
    staleness_b: float = 4.0

    def validate(self) -> None:
        positive(self, "buffer_size")
        step_size(self, "server_lr")
        _validate_mode_fields(self)
