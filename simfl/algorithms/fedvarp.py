"""FedVARP: variance reduction for partial client participation.

Jhunjhunwala, Sharma, Nagarkatti, Joshi, "FedVARP: Tackling the Variance Due to Partial
Client Participation in Federated Learning", UAI 2022, Algorithm 1 (docs/algorithms.md §1.5).
The server remembers y_i, the last normalised update Delta_i = (w_base - y_i^K) / eta_l of
every client (zeros at the start), and with S_t the received set steps along

    v_t = ybar + (1/|S_t|) sum_{i in S_t} (Delta_i - y_i),    ybar = (1/N) sum_i y_i,
    w_{t+1} = w_t - eta_g * eta_l * v_t,

then sets y_i <- Delta_i for i in S_t. Under unavailability S_t is the received set and
M = |S_t| (docs/algorithms.md §8.7 flags the 1/M vs 1/N factor as unchecked against the PDF;
this follows §1.5: 1/|S_t|). An empty round steps along the memory alone, v_t = ybar
(a design choice of §1.5). ybar is recomputed as the mean of the memory instead of
being carried as a running sum (same value, no accumulated rounding).

``lr_schedule`` (``server.lr_schedule``) makes eta_l that of round t, task.lr * scale(t),
in the server step; each update is normalised by the step size it was trained with
(:mod:`simfl.algorithms.update_table`).
"""

from __future__ import annotations

from typing import Sequence, TypedDict

import numpy as np
import torch

from simfl.algorithms.report import report
from simfl.algorithms.update_table import (Params, Step, TableRule, Tensors, descend, normalised,
                                           ordered, store, zeros)
from simfl.core.config.server import FedVARP as FedVARPConfig
from simfl.core.records import ClientUpdate, RoundOutcome


class FedVARPState(TypedDict):
    """The memory y_i per client."""

    table: Tensors


class FedVARP(TableRule):
    """FedVARP; the state is ``{"table": the memory y_i per client}``."""

    cfg: FedVARPConfig

    def init(self, params: Params, n_samples: np.ndarray) -> FedVARPState:
        return {"table": zeros(params, len(n_samples))}

    def aggregate(self, state: FedVARPState, params: Params, outcome: RoundOutcome,
                  updates: Sequence[ClientUpdate]) -> Step[FedVARPState]:
        table = state["table"]
        received = ordered(updates, len(next(iter(table.values()))))
        direction: Tensors = {}
        for name, rows in table.items():
            v = rows.mean(dim=0)
            if received:
                fresh = torch.stack([normalised(u, name, rows, self.local_lr) for u in received])
                idx = torch.tensor([u.client for u in received], device=rows.device)
                v = v + (fresh - rows[idx]).mean(dim=0)
            direction[name] = v
        new_state: FedVARPState = {"table": store(table, received, self.local_lr)}
        eta = self.cfg.server_lr * self.local_lr * self.lr_schedule.scale(outcome.round)
        return (descend(params, direction, eta), new_state,
                report(len(received), True, n_received=len(received)))
