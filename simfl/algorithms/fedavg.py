"""Federated averaging.

McMahan et al., "Communication-Efficient Learning of Deep Networks from Decentralized
Data", AISTATS 2017, Algorithm 1: w_{t+1} = w_t + eta_g * sum_k q_k (y_k - w_t) over
the received clients, with q_k = n_k / sum_j n_j (``weighting = "data"``) or 1/|R_t|
(``"uniform"``) or m_k / sum_j m_j with m_k how often the ``md`` sampler drew client k
(``"multiplicity"``: the plain average over the k draws of docs/algorithms.md §4.3; draws
whose update was lost drop out of the sum). An empty round leaves the model unchanged.
Each update is applied as the difference from the model it was computed from.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from simfl.algorithms.report import report
from simfl.core.config import FedAvg as FedAvgConfig
from simfl.core.records import ClientUpdate, LocalPayload, RoundOutcome


class FedAvg:
    def __init__(self, cfg: FedAvgConfig, local_lr: float) -> None:
        self.cfg = cfg

    def init(self, params, n_samples: np.ndarray) -> None:
        return None

    def client_payload(self, state, client: int) -> LocalPayload | None:
        return None

    def aggregate(self, state, params, outcome: RoundOutcome,
                  updates: Sequence[ClientUpdate]):
        if not updates:
            return params, state, report(0, False)
        updates = sorted(updates, key=lambda u: u.client)  # sums independent of arrival order
        if self.cfg.weighting == "data":
            weights = np.array([u.n_samples for u in updates], dtype=np.float64)
        elif self.cfg.weighting == "multiplicity":
            weights = np.array([outcome.draws(u.client) for u in updates], dtype=np.float64)
        else:
            weights = np.ones(len(updates))
        if weights.sum() == 0:  # every weight 0 (no received client holds data): no step
            return params, state, report(len(updates), False)
        weights = weights / weights.sum()
        # a running in-place sum in client order, deterministic and without a [K, ...] stack
        # of the deltas (measured in a run, 100 clients of an MLP 784-100-10, one thread:
        # 2.2 ms a round against 3.7 with the stack)
        names = list(params)
        step = None
        for u, w in zip(updates, weights.tolist()):
            delta = [u.delta[name] for name in names]
            if step is None:
                step = torch._foreach_mul(delta, w)
            else:
                torch._foreach_add_(step, delta, alpha=w)
        new = torch._foreach_add([params[name] for name in names], step, alpha=self.cfg.server_lr)
        return dict(zip(names, new)), state, report(len(updates), True)
