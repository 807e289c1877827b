"""Client samplers without a query phase: which of the clients the server can see it invites.

Every sampler is built as ``Sampler(cfg, probe)`` (``probe`` is the
:class:`~simfl.core.protocols.ClientProbe` capability; only samplers that query clients
use it), keeps its state explicit (``init`` / ``observe`` return it, nothing is
mutated) and returns sorted client ids. All but ``md`` return distinct available ids.
The view's ``available`` ids come sorted (its contract), so no pool is sorted again: at
10^6 clients that sort took most of a timing-only round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from simfl.core.config import (AllAvailable as AllAvailableConfig, LongestAbsent as
                               LongestAbsentConfig, Md as MdConfig, Uniform as UniformConfig)
from simfl.core.config.sampler import Sampler as SamplerConfig
from simfl.core.config.sampler import WaitGroup as WaitGroupConfig
from simfl.core.protocols import ClientProbe, PopulationView
from simfl.core.records import RoundOutcome
from simfl.core.rng import RngTree


class _Stateless:
    def __init__(self, cfg: SamplerConfig, probe: ClientProbe | None = None) -> None:
        self.cfg = cfg
        self.probe = probe

    def init(self, n_samples: np.ndarray) -> Any:
        return None

    def observe(self, state: Any, outcome: RoundOutcome) -> Any:
        return state


class UniformSampler(_Stateless):
    """min(k, |pool|) clients uniformly without replacement from the view's pool."""

    cfg: UniformConfig

    def select(self, state: None, view: PopulationView, k: int,
               rng: np.random.Generator) -> np.ndarray:
        if self.cfg.pool == "available":
            pool = np.asarray(view.available, dtype=np.int64)
        else:
            pool = np.arange(view.n_clients)
        if len(pool) <= k:
            return np.array(pool, dtype=np.int64)
        return np.sort(rng.choice(pool, size=k, replace=False))


class AllAvailableSampler(_Stateless):
    """Every client in the view's pool."""

    cfg: AllAvailableConfig

    def select(self, state: None, view: PopulationView, k: int,
               rng: np.random.Generator) -> np.ndarray:
        return np.asarray(view.available, dtype=np.int64)


class MdSampler(_Stateless):
    """k draws with replacement among the available clients, Pr(k) = n_k / sum_A n_j.

    Returns the k draws sorted, repeats included (the one sampler whose ids are not
    distinct): the simulation invites each distinct client once and records its count
    in ``RoundOutcome.multiplicity``. Assumes at least one available client holds data;
    when none does the draws are uniform.
    """

    cfg: MdConfig

    def select(self, state: None, view: PopulationView, k: int,
               rng: np.random.Generator) -> np.ndarray:
        pool = np.asarray(view.available, dtype=np.int64)
        if len(pool) == 0:
            return pool
        weights = view.n_samples[pool].astype(np.float64)
        p = weights / weights.sum() if weights.sum() > 0 else None
        return np.sort(rng.choice(pool, size=k, replace=True, p=p))


class LongestAbsentSampler(_Stateless):
    """The k available clients whose update was last received longest ago.

    FedLaAvg's selection (docs/algorithms.md §5, step 1): smallest last-participation round
    R_i first (-1 = never received), ties by lowest id; all of them when fewer than k
    are available. State: R, one integer per client.
    """

    cfg: LongestAbsentConfig

    def init(self, n_samples: np.ndarray) -> np.ndarray:
        return np.full(len(n_samples), -1, dtype=np.int64)

    def select(self, state: np.ndarray, view: PopulationView, k: int,
               rng: np.random.Generator) -> np.ndarray:
        pool = np.asarray(view.available, dtype=np.int64)
        order = np.argsort(state[pool], kind="stable")  # stable: ties keep id order
        return np.sort(pool[order[:k]])

    def observe(self, state: np.ndarray, outcome: RoundOutcome) -> np.ndarray:
        received = [a.client for a in outcome.received]
        new: np.ndarray = state.copy()
        new[received] = outcome.round
        return new


@dataclass(frozen=True)
class WaitGroupState:
    """Which group is running (its index g), its members still owed (sorted ids), N."""

    group: int
    pending: np.ndarray
    n_clients: int


class WaitGroupSampler:
    """The ``fedavg_wait`` reading of docs/algorithms.md §1.4 (MIFA code ``fedavg.py``).

    Group g is ``group_size`` clients drawn uniformly without replacement from all N,
    from the stream ``sampler/wait_group/{g}`` (so a group does not depend on the rounds
    before it). Each round invites the owed members that are available (possibly none);
    a member is owed until its update is received: one that was invited but lost is
    invited again. When the last one has reported, group g + 1 is drawn. Time mapping:
    the code consumes one round of its budget per availability observation while it
    waits; here every round consumes one round of ``run.rounds``, and a round in which no
    owed member is available lasts ``server.deadline_s`` (as every round with nobody
    working does). Members train when they are online rather than all
    together at the end; with the model frozen meanwhile (the ``fedavg_s_wait``
    aggregator) they all start from the same w_t, as in the code. Assumes every client
    comes online eventually, else the group never completes (as in the code). The group
    size is ``server.clients_per_round``, given when the sampler is built; ``select``'s
    ``k`` is not used.
    """

    def __init__(self, cfg: WaitGroupConfig, rngs: RngTree, group_size: int) -> None:
        self.cfg, self.rngs, self.group_size = cfg, rngs, group_size

    def draw(self, group: int, n_clients: int) -> np.ndarray:
        rng = self.rngs.stream(f"sampler/wait_group/{group}")
        size = min(self.group_size, n_clients)
        return np.sort(rng.choice(n_clients, size=size, replace=False)).astype(np.int64)

    def init(self, n_samples: np.ndarray) -> WaitGroupState:
        return WaitGroupState(0, self.draw(0, len(n_samples)), len(n_samples))

    def select(self, state: WaitGroupState, view: PopulationView, k: int,
               rng: np.random.Generator) -> np.ndarray:
        return np.intersect1d(state.pending, np.asarray(view.available, dtype=np.int64))

    def observe(self, state: WaitGroupState, outcome: RoundOutcome) -> WaitGroupState:
        received = np.array([a.client for a in outcome.received], dtype=np.int64)
        pending = np.setdiff1d(state.pending, received)
        if len(pending):
            return WaitGroupState(state.group, pending, state.n_clients)
        g = state.group + 1
        return WaitGroupState(g, self.draw(g, state.n_clients), state.n_clients)
