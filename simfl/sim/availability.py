"""Availability models: which clients are online when a round opens.

Per-round models draw every client's state when a round opens and keep it for the
whole round (a client does not go offline mid-round under these models). Draws are
vectorised over the population, one named stream per round.
"""

from __future__ import annotations

import numpy as np

from simfl.core.config import Always, Availability, Bernoulli
from simfl.core.errors import ConfigError
from simfl.core.rng import RngTree


class AlwaysOnline:
    """Every client online at every round."""

    def __init__(self, cfg: Always, n_clients: int, rngs: RngTree) -> None:
        self.n_clients = n_clients

    def online(self, round: int, t_s: float) -> np.ndarray:
        return np.ones(self.n_clients, dtype=bool)


class BernoulliOnline:
    """Client i online with probability p_i, independently at each round."""

    def __init__(self, cfg: Bernoulli, n_clients: int, rngs: RngTree) -> None:
        self.rngs = rngs
        self.n_clients = n_clients
        if cfg.p_min is not None:
            self.p = rngs.stream("availability/p").uniform(cfg.p_min, 1.0, size=n_clients)
        elif isinstance(cfg.p, tuple):
            if len(cfg.p) != n_clients:
                raise ConfigError("population.availability.p", cfg.p,
                                  f"one probability or a list of task.n_clients = {n_clients}")
            self.p = np.asarray(cfg.p, dtype=float)
        else:
            self.p = np.full(n_clients, cfg.p)

    def online(self, round: int, t_s: float) -> np.ndarray:
        return self.rngs.stream(f"availability/round/{round}").random(self.n_clients) < self.p


_MODELS = {Always: AlwaysOnline, Bernoulli: BernoulliOnline}


def build_availability(cfg: Availability, n_clients: int, rngs: RngTree):
    return _MODELS[type(cfg)](cfg, n_clients, rngs)
