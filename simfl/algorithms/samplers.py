"""Client samplers: which of the clients the server can see it invites."""

from __future__ import annotations

import numpy as np

from simfl.core.config import AllAvailable as AllAvailableConfig, Uniform as UniformConfig
from simfl.core.protocols import PopulationView
from simfl.core.records import RoundOutcome


class _Stateless:
    def init(self, n_samples: np.ndarray) -> None:
        return None

    def observe(self, state, outcome: RoundOutcome) -> None:
        return state


class UniformSampler(_Stateless):
    """min(k, |pool|) clients uniformly without replacement from the view's pool."""

    def __init__(self, cfg: UniformConfig) -> None:
        self.cfg = cfg

    def select(self, state, view: PopulationView, k: int, rng: np.random.Generator) -> np.ndarray:
        pool = view.available if self.cfg.pool == "available" else np.arange(view.n_clients)
        if len(pool) <= k:
            return np.array(pool, dtype=np.int64)
        return np.sort(rng.choice(pool, size=k, replace=False))


class AllAvailableSampler(_Stateless):
    """Every client in the view's pool."""

    def __init__(self, cfg: AllAvailableConfig) -> None:
        self.cfg = cfg

    def select(self, state, view: PopulationView, k: int, rng: np.random.Generator) -> np.ndarray:
        return np.array(view.available, dtype=np.int64)
