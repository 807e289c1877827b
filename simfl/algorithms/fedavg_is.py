"""FedAvg with importance sampling (FedAvg-IS).

The FedAvg-IS baseline of Gu et al., "Fast Federated Learning in the Presence of
Arbitrary Device Unavailability", NeurIPS 2021 (official code MIFA_code, ``sgd.py
--importance_sampling``; docs/algorithms.md §1.3). With p_i the known probability that client
i's update is received in a round,

    w_{t+1} = w_t + eta_g * (1/N) * sum_{i in R_t} (y_i - w_t) / p_i,

an unbiased estimate of the full-participation average step (high variance when some
p_i are small). An empty round leaves the model unchanged.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from simfl.algorithms.report import report
from simfl.algorithms.update_table import Params, Step, Tensors, cast, ordered
from simfl.core.config.server import FedAvgIS as FedAvgISConfig
from simfl.core.errors import ConfigError
from simfl.core.records import ClientUpdate, RoundOutcome


class FedAvgIS:
    """FedAvg-IS; the state is ``{"p": p_i per client}`` (float64 array of length N)."""

    def __init__(self, cfg: FedAvgISConfig, local_lr: float) -> None:
        self.cfg = cfg

    def init(self, params: Params, n_samples: np.ndarray) -> dict[str, np.ndarray]:
        n = len(n_samples)
        p = np.asarray(self.cfg.p, dtype=np.float64)
        if p.ndim == 0:
            p = np.full(n, float(p))
        elif len(p) != n:
            raise ConfigError("server.algorithm.p", self.cfg.p,
                              f"one probability or a list of {n} (one per client)")
        return {"p": p}

    def client_payload(self, state: dict[str, np.ndarray], client: int) -> None:
        return None

    def aggregate(self, state: dict[str, np.ndarray], params: Params, outcome: RoundOutcome,
                  updates: Sequence[ClientUpdate]) -> Step[dict[str, np.ndarray]]:
        p = state["p"]
        received = ordered(updates, len(p))
        if not received:
            return params, state, report(0, False, n_received=0)
        weights = self.cfg.server_lr / (len(p) * p[[u.client for u in received]])
        new: Tensors = {}
        for name, value in params.items():
            w = torch.as_tensor(weights, dtype=value.dtype, device=value.device)
            deltas = torch.stack([cast(u.delta[name], value) for u in received])
            new[name] = value + torch.tensordot(w, deltas, dims=1)
        return new, state, report(len(received), True, n_received=len(received))
