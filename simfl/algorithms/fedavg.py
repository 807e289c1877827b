"""Federated averaging.

McMahan et al., "Communication-Efficient Learning of Deep Networks from Decentralized
Data", AISTATS 2017, Algorithm 1: w_{t+1} = w_t + eta_g * sum_k q_k (y_k - w_t) over
the received clients, with q_k = n_k / sum_j n_j (``weighting = "data"``) or 1/|R_t|
(``"uniform"``) or m_k / sum_j m_j with m_k how often the ``md`` sampler drew client k
(``"multiplicity"``: the plain average over the k draws of ALGORITHMS.md §4.3; draws
whose update was lost drop out of the sum). An empty round leaves the model unchanged.
Each update is applied as the difference from the model it was computed from.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from simfl.core.config import FedAvg as FedAvgConfig
from simfl.core.records import ClientUpdate, RoundOutcome


class FedAvg:
    def __init__(self, cfg: FedAvgConfig, local_lr: float) -> None:
        self.cfg = cfg

    def init(self, params, n_samples: np.ndarray) -> None:
        return None

    def client_payload(self, state, client: int) -> None:
        return None

    def aggregate(self, state, params, outcome: RoundOutcome,
                  updates: Sequence[ClientUpdate]):
        if not updates:
            return params, state, {}
        updates = sorted(updates, key=lambda u: u.client)  # sums independent of arrival order
        if self.cfg.weighting == "data":
            weights = np.array([u.n_samples for u in updates], dtype=np.float64)
        elif self.cfg.weighting == "multiplicity":
            weights = np.array([outcome.draws(u.client) for u in updates], dtype=np.float64)
        else:
            weights = np.ones(len(updates))
        if weights.sum() == 0:
            return params, state, {}
        weights = weights / weights.sum()
        new = {}
        for name, value in params.items():
            w = torch.tensor(weights, dtype=value.dtype, device=value.device)
            stacked = torch.stack([u.delta[name] for u in updates])
            step = torch.tensordot(w, stacked, dims=1)
            new[name] = value + self.cfg.server_lr * step
        return new, state, {}
