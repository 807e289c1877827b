"""FedLaAvg: Federated Latest Averaging (server side).

Yan et al., "Distributed Non-Convex Optimization with Sublinear Speedup under
Intermittent Client Availability", INFORMS Journal on Computing (arXiv 2002.07399),
Algorithm 1 (one local step) and Algorithm 2 (C local steps); official code
mikudehuane/FedLaAvg ``train/server.py`` (docs/algorithms.md §5, step 3). The server keeps the
running mean G_bar = (1/N) sum_i G_i of every client's latest gradient sum
G_i = (w_base - y_i) / gamma (zero until client i first reports) and applies

    w_{t+1} = w_t - eta_g * gamma * G_bar

every round, even when no client reported (stale G_bar), except during the first
``warmup_rounds`` rounds (the code's ``num_non_update_rounds``), which only collect.
Clients upload delta_i = G_i^new - G_i^old in the paper; the server here receives
y_i - w_base and keeps the table itself, which is the same arithmetic. G_bar is recomputed
as the mean of the table, so it carries no accumulated rounding. Which clients report
(the K longest absent) is the sampler's job.

Loss scaling (docs/algorithms.md §5 step 2 and §8.4): the code trains client i on the loss
scaled by N n_i / n. With C > 1 local steps this changes the local trajectory (it is SGD
with step gamma N n_i / n), so scaling G_i on the server is equivalent only for C = 1 and
is not done here. With ``loss_scaling = true`` the aggregator hands the factor to the
local rule as ``client_payload(...).loss_scale``, and the ``scaled_sgd`` local rule
(:mod:`simfl.train.local`) multiplies the loss by it.

``lr_schedule`` (``server.lr_schedule``) makes eta_l that of round t, task.lr * scale(t),
in the server step; each update is normalised by the step size it was trained with
(:mod:`simfl.algorithms.update_table`).
"""

from __future__ import annotations

from typing import Sequence, TypedDict

import numpy as np

from simfl.algorithms.report import report
from simfl.algorithms.update_table import (Params, Step, TableRule, Tensors, descend, mean_rows,
                                           ordered, store, zeros)
from simfl.core.config.server import FedLaAvg as FedLaAvgConfig
from simfl.core.records import ClientUpdate, RoundOutcome, ScaledSgdPayload


class FedLaAvgState(TypedDict):
    """The latest normalised update G_i per client, and each client's loss scale N n_i / n."""

    table: Tensors
    loss_scale: np.ndarray


class FedLaAvg(TableRule):
    """FedLaAvg; the state is ``{"table": latest G_i per client, "loss_scale": N n_i / n}``."""

    cfg: FedLaAvgConfig

    def init(self, params: Params, n_samples: np.ndarray) -> FedLaAvgState:
        n_samples = np.asarray(n_samples, dtype=np.float64)
        total = n_samples.sum()
        scale = len(n_samples) * n_samples / total if total > 0 else np.ones(len(n_samples))
        return {"table": zeros(params, len(n_samples)), "loss_scale": scale}

    def client_payload(self, state: FedLaAvgState, client: int) -> ScaledSgdPayload | None:
        if not self.cfg.loss_scaling:
            return None
        return ScaledSgdPayload(float(state["loss_scale"][client]))

    def aggregate(self, state: FedLaAvgState, params: Params, outcome: RoundOutcome,
                  updates: Sequence[ClientUpdate]) -> Step[FedLaAvgState]:
        received = ordered(updates, len(state["loss_scale"]))
        table = store(state["table"], received, self.local_lr)
        new_state: FedLaAvgState = {"table": table, "loss_scale": state["loss_scale"]}
        if outcome.round < self.cfg.warmup_rounds:
            return params, new_state, report(len(received), False, n_received=len(received))
        eta = self.cfg.server_lr * self.local_lr * self.lr_schedule.scale(outcome.round)
        return (descend(params, mean_rows(table), eta), new_state,
                report(len(received), True, n_received=len(received)))
