"""The client population: device speed and availability."""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.node import Choice, Node, non_negative, positive, probability, require


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
class Availability(Choice, point="availability"):
    """When a client is online and can be selected."""


@dataclass(frozen=True)
class Always(Availability):
    """Every client is available at every round."""

    kind = "always"


@dataclass(frozen=True)
class Bernoulli(Availability):
    """Independent per-round draws: client i is available with probability p_i.

    ``p`` is one probability for all clients or a list with one per client; ``p_min``
    instead draws p_i ~ U(p_min, 1) once per client (MIFA's "random" model).
    The draw happens when a round opens; a client stays as drawn for the whole round.
    """

    kind = "bernoulli"
    paper = "Gu et al., Fast Federated Learning in the Presence of Arbitrary Device Unavailability (MIFA), NeurIPS 2021"
    exclusive = (("p", "p_min"),)
    p: float | tuple[float, ...] | None = None
    p_min: float | None = None

    def validate(self) -> None:
        probability(self, "p", "p_min")
        require(self.p is None or self.p_min is None, "p_min", self.p_min,
                "null when p is set (set only one of them)")
        if self.p is None and self.p_min is None:
            self._set_default("p", 0.8)


@dataclass(frozen=True)
class Population(Node):
    """Who the clients are, how fast they compute and when they are online."""

    compute: Compute = Compute()
    availability: Availability = Always()
