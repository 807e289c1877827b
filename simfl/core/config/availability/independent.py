"""Availability that ignores the client's data: always online, or fixed probabilities.

``always`` keeps every client online; ``bernoulli`` draws each client's state per
round, independently, with probability p_i (one for all, one per client, or drawn
once per client: MIFA's "random" model).
"""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.availability.base import Availability
from simfl.core.config.checks import probability, require
from simfl.core.config.papers import MIFA


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
    paper = MIFA
    exclusive = (("p", "p_min"),)
    p: float | tuple[float, ...] | None = None
    p_min: float | None = None

    def validate(self) -> None:
        probability(self, "p", "p_min")
        require(self.p is None or self.p_min is None, "p_min", self.p_min,
                "null when p is set (set only one of them)")
        if self.p is None and self.p_min is None:
            self._set_default("p", 0.8)
