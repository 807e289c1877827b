"""The server: aggregation rule, client sampler, round deadline."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from simfl.core.config.node import Choice, Node, non_negative, positive, require


@dataclass(frozen=True)
class Aggregator(Choice, point="aggregators"):
    """How the server turns received client updates into a new global model."""


@dataclass(frozen=True)
class FedAvg(Aggregator):
    """Federated averaging of the received updates, weighted by data size or uniformly."""

    kind = "fedavg"
    paper = "McMahan et al., Communication-Efficient Learning of Deep Networks from Decentralized Data, AISTATS 2017"
    weighting: Literal["data", "uniform"] = "data"
    server_lr: float = 1.0

    def validate(self) -> None:
        positive(self, "server_lr")


@dataclass(frozen=True)
class Sampler(Choice, point="samplers"):
    """Which clients the server invites to a round."""


@dataclass(frozen=True)
class Uniform(Sampler):
    """Uniformly at random without replacement, from the available clients or from all.

    With ``pool = "all"`` the server does not know who is online: invited clients that
    are offline count as missing with reason ``offline``.
    """

    kind = "uniform"
    pool: Literal["available", "all"] = "available"


@dataclass(frozen=True)
class AllAvailable(Sampler):
    """Every available client, ignoring clients_per_round."""

    kind = "all_available"


@dataclass(frozen=True)
class Server(Node):
    """Synchronous rounds: invite, wait for the deadline or for every invitee, aggregate.

    ``overcommit`` invites ``ceil(overcommit * clients_per_round)`` clients and closes
    the round as soon as ``clients_per_round`` updates are in. A round with fewer than
    ``min_updates`` received updates is abandoned: nothing is trained or aggregated.
    """

    algorithm: Aggregator = FedAvg()
    sampler: Sampler = Uniform()
    clients_per_round: int = 10
    deadline_s: float = 60.0
    overcommit: float = 1.0
    mode: Literal["sync"] = "sync"
    min_updates: int = 0

    def validate(self) -> None:
        positive(self, "clients_per_round", "deadline_s")
        non_negative(self, "min_updates")
        require(self.overcommit >= 1.0, "overcommit", self.overcommit, "a number >= 1")
