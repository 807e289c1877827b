"""FedAvg with (at most) S clients, the ``fedavg_avail`` reading.

The FedAvg baseline of Jiang et al., "FedAR: Addressing Client Unavailability in
Federated Learning with Local Update Approximation and Rectification", arXiv 2407.19103
(2024), "FedAvg with at most S = 50 clients" (ALGORITHMS.md §1.4, reading
``fedavg_avail``, itself [UNVERIFIED]): the sampler picks min(S, |A_t|) clients from the
available set (``server.sampler = uniform``, ``server.clients_per_round = S``) and the
server replaces the model by the average of the received models,

    w_{t+1} = w_t + eta_g * sum_{i in R_t} q_i (y_i - w_t),

with q_i = 1/|R_t| (``weighting = "uniform"``, as MIFA's ``sgd.py``) or n_i / sum_j n_j
(``"data"``). With eta_g = 1 this is (1/|R_t|) sum y_i exactly. An empty round leaves
the model unchanged.

The other reading, ``fedavg_wait`` (MIFA code ``fedavg.py``: draw S clients from all N
and wait, round after round, until each has been available once), aggregates the same
way; the waiting is a sampler/round-timing concern and is not done here.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from simfl.algorithms.update_table import cast, ordered
from simfl.core.config.server import FedAvgS as FedAvgSConfig
from simfl.core.records import ClientUpdate, RoundOutcome


class FedAvgS:
    """Average of the received models; stateless."""

    def __init__(self, cfg: FedAvgSConfig, local_lr: float) -> None:
        self.cfg = cfg

    def init(self, params, n_samples: np.ndarray) -> None:
        return None

    def client_payload(self, state, client: int) -> None:
        return None

    def aggregate(self, state, params, outcome: RoundOutcome,
                  updates: Sequence[ClientUpdate]):
        received = ordered(updates)
        if self.cfg.weighting == "data":
            q = np.array([u.n_samples for u in received], dtype=np.float64)
        else:
            q = np.ones(len(received))
        if not received or q.sum() == 0:
            return params, state, {"n_received": float(len(received))}
        q = self.cfg.server_lr * q / q.sum()
        new = {}
        for name, value in params.items():
            w = torch.as_tensor(q, dtype=value.dtype, device=value.device)
            deltas = torch.stack([cast(u.delta[name], value) for u in received])
            new[name] = value + torch.tensordot(w, deltas, dims=1)
        return new, state, {"n_received": float(len(received))}
