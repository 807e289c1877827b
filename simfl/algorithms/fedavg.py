"""Federated averaging.

McMahan et al., "Communication-Efficient Learning of Deep Networks from Decentralized
Data", AISTATS 2017, Algorithm 1: w_{t+1} = w_t + eta_g * sum_k q_k (y_k - w_t) over
the received clients, with q_k = n_k / sum_j n_j (``weighting = "data"``) or 1/|R_t|
(``"uniform"``) or m_k / sum_j m_j with m_k how often the ``md`` sampler drew client k
(``"multiplicity"``: the plain average over the k draws of docs/algorithms.md §4.3; draws
whose update was lost drop out of the sum). An empty round leaves the model unchanged.
Each update is applied as the difference from the model it was computed from.

The step reads only sum_k w_k (y_k - w_base,k) and the weights, so FedAvg declares
``needs = "sum"``: the round loop then gives the executor :meth:`FedAvg.sum_weight`, the
executor adds each delta into one accumulator as it is made, and ``aggregate`` receives
the sum (``weighted_sum``, ``weights``, ``n_summed`` on the list of updates) instead of
K separate deltas. A plain list of updates is summed here, with the same weights.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from simfl.algorithms.report import report
from simfl.algorithms.update_table import Params, Step
from simfl.core.config import FedAvg as FedAvgConfig
from simfl.core.records import ClientUpdate, LocalPayload, RoundOutcome, SummedUpdates


class FedAvg:
    #: the step needs only the weighted sum of the deltas, with :meth:`sum_weight`'s weights
    needs = "sum"

    def __init__(self, cfg: FedAvgConfig, local_lr: float) -> None:
        self.cfg = cfg

    def sum_weight(self, outcome: RoundOutcome, client: int, n_samples: int) -> float:
        """The weight of ``client``'s update in the round of ``outcome`` before
        normalisation (``weighting``: its sample count, its number of draws, or 1)."""
        if self.cfg.weighting == "data":
            return float(n_samples)
        if self.cfg.weighting == "multiplicity":
            return float(outcome.draws(client))
        return 1.0

    def init(self, params: Params, n_samples: np.ndarray) -> None:
        return None

    def client_payload(self, state: None, client: int) -> LocalPayload | None:
        return None

    def aggregate(self, state: None, params: Params, outcome: RoundOutcome,
                  updates: Sequence[ClientUpdate]) -> Step[None]:
        if not updates:
            return params, state, report(0, False)
        names = list(params)
        if isinstance(updates, SummedUpdates):  # summed by the executor with this rule's weights
            summed = updates.weighted_sum
            weights = np.array(updates.weights, dtype=np.float64)
            expected = [self.sum_weight(outcome, u.client, u.n_samples) for u in updates]
            if weights.tolist() != expected:
                raise ValueError("the updates were summed with weights other than FedAvg's")
            if weights.sum() == 0:  # every weight 0 (no received client holds data): no step
                return params, state, report(updates.n_summed, False)
            new = torch._foreach_add([params[name] for name in names],
                                     [summed[name] for name in names],
                                     alpha=self.cfg.server_lr / weights.sum())
            return dict(zip(names, new)), state, report(updates.n_summed, True)
        updates = sorted(updates, key=lambda u: u.client)  # sums independent of arrival order
        weights = np.array([self.sum_weight(outcome, u.client, u.n_samples) for u in updates])
        if weights.sum() == 0:  # every weight 0 (no received client holds data): no step
            return params, state, report(len(updates), False)
        weights = weights / weights.sum()
        # a running in-place sum in client order, deterministic and without a [K, ...] stack
        # of the deltas (measured in a run, 100 clients of an MLP 784-100-10, one thread:
        # 2.2 ms a round against 3.7 with the stack)
        step: tuple[torch.Tensor, ...] | list[torch.Tensor] | None = None
        for u, w in zip(updates, weights.tolist()):
            delta = [u.delta[name] for name in names]
            if step is None:
                step = torch._foreach_mul(delta, w)
            else:
                torch._foreach_add_(step, delta, alpha=w)
        assert step is not None  # updates is not empty
        new = torch._foreach_add([params[name] for name in names], step, alpha=self.cfg.server_lr)
        return dict(zip(names, new)), state, report(len(updates), True)
