"""The client population: device speed and availability."""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.availability import Always, Availability
from simfl.core.config.energy import Battery, Energy
from simfl.core.config.node import Node, at_most, non_negative, require
from simfl.core.config.placement import Mobility, Placement, Static
from simfl.core.config.sessions import Sessions


#: the widest lognormal spread of training speeds: exp(10 z) already spans 1e-26 to
#: 1e26 across a large population
MAX_SIGMA = 10.0
#: the range of median training speeds (samples per second) whose every client's speed
#: stays a positive, finite number at any ``sigma`` up to MAX_SIGMA
MEDIAN_SPEED_RANGE = (1e-6, 1e12)


@dataclass(frozen=True)
class Compute(Node):
    """Training speed in samples per second, lognormal across clients.

    Client i trains at ``median_samples_per_s * exp(sigma * z_i)`` with z_i ~ N(0, 1),
    drawn once; its compute time for a round is its local work (samples) over its speed.
    ``sigma = 0`` gives every client the median speed. Bounds: ``sigma`` <= 10 and the
    median in [1e-6, 1e12] samples/s, so that every speed is positive and finite.
    """

    median_samples_per_s: float = 200.0
    sigma: float = 0.5

    def validate(self) -> None:
        low, high = MEDIAN_SPEED_RANGE
        require(low <= self.median_samples_per_s <= high, "median_samples_per_s",
                self.median_samples_per_s, f"a speed in [{low:g}, {high:g}] samples/s")
        non_negative(self, "sigma")
        at_most(self, MAX_SIGMA, "sigma", why="a wider spread gives speeds of zero or infinity")


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
