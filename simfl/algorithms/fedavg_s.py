"""FedAvg that waits for a drawn group of S clients (``fedavg_s_wait``).

The FedAvg baseline of Gu et al., "Fast Federated Learning in the Presence of Arbitrary
Device Unavailability", NeurIPS 2021 (official code MIFA_code ``fedavg.py``;
docs/algorithms.md §1.4): S clients drawn uniformly from all N train from the same w_t, and

    w_{t+1} = (1/S) sum_{i in group} y_i = w_t + (1/S) sum_{i in group} (y_i - w_t),

once all S have been available (``weighting = "data"``: weights n_i / sum n_j instead).
The ``wait_group`` sampler keeps the group and invites its members as they come online;
this rule buffers their updates and leaves the model unchanged until the buffer holds
S of them (S = min(``server.clients_per_round``, N)), then applies the weighted mean
and empties the buffer. Every buffered update was computed from the frozen model, so the
result is the code's. A round without updates changes nothing. Not modelled: the code's
learning-rate decay eta_0/(t+1) over training rounds (the local rule's step size is
``task.lr`` throughout).

If the buffer is reset while a group is half in (a session start re-initialises the
aggregator), the next S updates are averaged: still all from the same frozen model,
but drawn from two groups.
"""

from __future__ import annotations

from typing import Sequence, TypedDict

import numpy as np
import torch

from simfl.algorithms.report import report
from simfl.algorithms.update_table import Params, Step, Tensors, cast, ordered
from simfl.core.config.server import FedAvgSWait as FedAvgSWaitConfig
from simfl.core.records import ClientUpdate, RoundOutcome


class FedAvgWaitState(TypedDict):
    """The buffered group: weighted sum of its deltas, total weight, count, and size S."""

    sum: Tensors
    weight: float
    count: int
    size: int


class FedAvgWait:
    """The state: ``sum`` = sum_i q_i delta_i and ``weight`` = sum_i q_i over the ``count``
    buffered updates, ``size`` = S (q_i = 1, or n_i with data weighting)."""

    def __init__(self, cfg: FedAvgSWaitConfig, local_lr: float, group_size: int) -> None:
        self.cfg, self.group_size = cfg, group_size

    def init(self, params: Params, n_samples: np.ndarray) -> FedAvgWaitState:
        return {"sum": {k: torch.zeros_like(v) for k, v in params.items()}, "weight": 0.0,
                "count": 0, "size": min(self.group_size, len(n_samples))}

    def client_payload(self, state: FedAvgWaitState, client: int) -> None:
        return None

    def aggregate(self, state: FedAvgWaitState, params: Params, outcome: RoundOutcome,
                  updates: Sequence[ClientUpdate]) -> Step[FedAvgWaitState]:
        received = ordered(updates)
        if not received:
            return params, state, report(0, False, n_received=0, n_buffered=state["count"],
                                         waiting_for=state["size"] - state["count"])
        q = [float(u.n_samples) if self.cfg.weighting == "data" else 1.0 for u in received]
        total: Tensors = {}
        for name, acc in state["sum"].items():
            w = torch.tensor(q, dtype=acc.dtype, device=acc.device)
            deltas = torch.stack([cast(u.delta[name], acc) for u in received])
            total[name] = acc + torch.tensordot(w, deltas, dims=1)
        weight, count = state["weight"] + sum(q), state["count"] + len(received)
        counts = {"n_received": len(received), "n_buffered": count}
        if count < state["size"]:
            return (params, {**state, "sum": total, "weight": weight, "count": count},
                    report(len(received), False, **counts, waiting_for=state["size"] - count))
        empty: FedAvgWaitState = {"sum": {k: torch.zeros_like(v) for k, v in total.items()},
                                  "weight": 0.0, "count": 0, "size": state["size"]}
        if weight == 0:  # only data weighting, and no member holds data
            return params, empty, report(len(received), False, **counts)
        step = self.cfg.server_lr / weight
        return ({k: v + step * cast(total[k], v) for k, v in params.items()}, empty,
                report(len(received), True, **counts))
