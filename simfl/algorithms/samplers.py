"""Client samplers without a query phase: which of the clients the server can see it invites.

Every sampler is built as ``Sampler(cfg, probe)`` (``probe`` is the
:class:`~simfl.core.protocols.ClientProbe` capability; only samplers that query clients
use it), keeps its state explicit (``init`` / ``observe`` return it, nothing is
mutated) and returns sorted client ids. All but ``md`` return distinct available ids.
"""

from __future__ import annotations

import numpy as np

from simfl.core.config import (AllAvailable as AllAvailableConfig, LongestAbsent as
                               LongestAbsentConfig, Md as MdConfig, Uniform as UniformConfig)
from simfl.core.protocols import ClientProbe, PopulationView
from simfl.core.records import RoundOutcome


class _Stateless:
    def __init__(self, cfg, probe: ClientProbe | None = None) -> None:
        self.cfg = cfg
        self.probe = probe

    def init(self, n_samples: np.ndarray) -> None:
        return None

    def observe(self, state, outcome: RoundOutcome) -> None:
        return state


class UniformSampler(_Stateless):
    """min(k, |pool|) clients uniformly without replacement from the view's pool."""

    cfg: UniformConfig

    def select(self, state, view: PopulationView, k: int, rng: np.random.Generator) -> np.ndarray:
        if self.cfg.pool == "available":
            pool = np.sort(np.asarray(view.available, dtype=np.int64))
        else:
            pool = np.arange(view.n_clients)
        if len(pool) <= k:
            return np.array(pool, dtype=np.int64)
        return np.sort(rng.choice(pool, size=k, replace=False))


class AllAvailableSampler(_Stateless):
    """Every client in the view's pool."""

    cfg: AllAvailableConfig

    def select(self, state, view: PopulationView, k: int, rng: np.random.Generator) -> np.ndarray:
        return np.sort(np.asarray(view.available, dtype=np.int64))


class MdSampler(_Stateless):
    """k draws with replacement among the available clients, Pr(k) = n_k / sum_A n_j.

    Returns the k draws sorted, repeats included (the one sampler whose ids are not
    distinct): the simulation invites each distinct client once and records its count
    in ``RoundOutcome.multiplicity``. Assumes at least one available client holds data;
    when none does the draws are uniform.
    """

    cfg: MdConfig

    def select(self, state, view: PopulationView, k: int, rng: np.random.Generator) -> np.ndarray:
        pool = np.sort(np.asarray(view.available, dtype=np.int64))
        if len(pool) == 0:
            return pool
        weights = view.n_samples[pool].astype(np.float64)
        p = weights / weights.sum() if weights.sum() > 0 else None
        return np.sort(rng.choice(pool, size=k, replace=True, p=p))


class LongestAbsentSampler(_Stateless):
    """The k available clients whose update was last received longest ago.

    FedLaAvg's selection (ALGORITHMS.md §5, step 1): smallest last-participation round
    R_i first (-1 = never received), ties by lowest id; all of them when fewer than k
    are available. State: R, one integer per client.
    """

    cfg: LongestAbsentConfig

    def init(self, n_samples: np.ndarray) -> np.ndarray:
        return np.full(len(n_samples), -1, dtype=np.int64)

    def select(self, state: np.ndarray, view: PopulationView, k: int,
               rng: np.random.Generator) -> np.ndarray:
        pool = np.sort(np.asarray(view.available, dtype=np.int64))
        order = np.argsort(state[pool], kind="stable")  # stable: ties keep id order
        return np.sort(pool[order[:k]])

    def observe(self, state: np.ndarray, outcome: RoundOutcome) -> np.ndarray:
        received = [a.client for a in outcome.received]
        new = state.copy()
        new[received] = outcome.round
        return new
