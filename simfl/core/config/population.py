"""The client population: device speed and availability."""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.availability import Always, Availability
from simfl.core.config.energy import Battery, Energy
from simfl.core.config.node import Node, non_negative, positive
from simfl.core.config.placement import Mobility, Placement, Static
from simfl.core.config.sessions import Sessions


@dataclass(frozen=True)
class Compute(Node):
    """Training speed in samples per second, lognormal across clients.

    Client i trains at ``median_samples_per_s * exp(sigma * z_i)`` with z_i ~ N(0, 1),
    drawn once; its compute time for a round is its local work (samples) over its speed.
    ``sigma = 0`` gives every client the median speed.
    """

    median_samples_per_s: float = 200.0
    sigma: float = 0.5

    def validate(self) -> None:
        positive(self, "median_samples_per_s")
        non_negative(self, "sigma")


@dataclass(frozen=True)
class Population(Node):
    """Who the clients are, how fast they compute, when they are online, their energy,
    and (for the shared radio) where they are and how they move."""

    compute: Compute = Compute()
    availability: Availability = Always()
    sessions: Sessions | None = None
    battery: Battery | None = None
    energy: Energy = Energy()
    placement: Placement | None = None
    mobility: Mobility = Static()
