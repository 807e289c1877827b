"""Power-of-Choice: invite the candidates whose local loss on the global model is highest.

Cho, Wang, Joshi, "Towards Understanding Biased Client Selection in Federated
Learning", AISTATS 2022, Algorithm 1 (pow-d): draw a candidate set of d clients
without replacement with probability proportional to n_k, ask each for its local loss
F_k(w_t), invite the k with the largest losses. docs/algorithms.md §4.3: the FedGS code asks
every available client (d = |A_t|), which is ``d = null`` here.

The loss query goes through the :class:`~simfl.core.protocols.ClientProbe` capability:
the simulation charges the exchange (model down, one pass over the local data, one
number up) in simulated time and counts it apart from training. Candidates whose answer
is lost are not invited. Not modelled: the paper's cheaper variants that reuse stale
losses (cpow-d, rpow-d).
"""

from __future__ import annotations

import numpy as np

from simfl.algorithms.samplers import _Stateless
from simfl.core.config import PowerOfChoice as PowerOfChoiceConfig
from simfl.core.protocols import PopulationView


class PowerOfChoiceSampler(_Stateless):
    cfg: PowerOfChoiceConfig

    def candidates(self, view: PopulationView, k: int, rng: np.random.Generator) -> np.ndarray:
        """The clients to query: all available ones, or d of them drawn proportionally to n_k.

        d is raised to k when smaller (the rule needs d >= k).
        """
        pool = np.asarray(view.available, dtype=np.int64)  # sorted: the view's contract
        if self.cfg.d is None or len(pool) <= max(self.cfg.d, k):
            return pool
        weights = view.n_samples[pool].astype(np.float64)
        p = weights / weights.sum() if weights.sum() > 0 else None
        return np.sort(rng.choice(pool, size=max(self.cfg.d, k), replace=False, p=p))

    def select(self, state: None, view: PopulationView, k: int,
               rng: np.random.Generator) -> np.ndarray:
        if self.probe is None:
            raise RuntimeError("power_of_choice needs a ClientProbe to query losses")
        asked = self.candidates(view, k, rng)
        if len(asked) == 0:
            return asked
        answered, losses = self.probe.losses(view.round, asked)
        return top_losses(np.asarray(answered, dtype=np.int64), np.asarray(losses), k)


def top_losses(clients: np.ndarray, losses: np.ndarray, k: int) -> np.ndarray:
    """The (sorted) ids of the k clients with the largest losses; ties by lowest id."""
    order = np.lexsort((clients, -losses))  # last key first: loss descending, then id
    return np.sort(clients[order[:k]])
