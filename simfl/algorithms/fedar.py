"""FedAR: client update Approximation and Rectification.

Jiang, Zhou, Zhang, Chakraborty, "FedAR: Addressing Client Unavailability in Federated
Learning with Local Update Approximation and Rectification", arXiv 2407.19103 (2024),
global update w_{t+1} = w_t - (eta_t / N_t) sum_i psi_{i,t} G_i[t] (docs/algorithms.md §1.1;
no public code, the paper's equation numbers could not be read). The server keeps each
client's latest normalised update G_i (its surrogate) and the round it arrived; with
tau_i the rounds since then (0 when received this round),

    psi_i = 0                         if client i never reported or tau_i > g,
    psi_i = min((tau_i + 1)^rho, psi_cap)   otherwise,
    N_t   = #{i : psi_i > 0},
    w_{t+1} = w_t - eta_g * eta_l / N_t * sum_i psi_i G_i.

g is ``cutoff_rounds`` (null = no cutoff). If N_t = 0 the model is unchanged; an empty
round with stored surrogates within the cutoff still moves it. rho, g and the cap are
[UNVERIFIED] (docs/algorithms.md §8.6); the defaults follow §1.1. Staleness is counted from
the round of the model each update was computed on (``ClientUpdate.base_round``):
tau_i = ``outcome.round`` - base round, so rounds in which the aggregator is not called
still age the table, and an update computed on an older model enters already stale. In
synchronous rounds the base round is the current one (tau = 0 on receipt).

Late uploads: with ``late_policy = "discard"`` (the default of §1.1) the simulator
interrupts a device that misses its deadline, and its update never exists. With
``"store"`` the device finishes in the background and its update, computed on the model
of round b, comes in ``updates`` of the round during which it lands, t > b; it is stored
as G_i with tau_i = t - b (§1.1: rounds since the model it was computed on), but only if
it is newer than the client's stored update (a base round after the stored one), so an
older late update never overwrites a fresher one. The rest of the step is unchanged.

``lr_schedule`` (``server.lr_schedule``) makes eta_l that of round t, task.lr * scale(t),
in the server step; each update is normalised by the step size it was trained with
(:mod:`simfl.algorithms.update_table`).
"""

from __future__ import annotations

from typing import Sequence, TypedDict

import numpy as np

from simfl.algorithms.report import report
from simfl.algorithms.update_table import (Params, Step, TableRule, Tensors, descend, ordered,
                                           store, weighted_rows, zeros)
from simfl.core.config.server import FedAR as FedARConfig
from simfl.core.records import ClientUpdate, RoundOutcome


def rectification_weights(tau: np.ndarray, seen: np.ndarray, rho: float,
                          cutoff_rounds: int | None, psi_cap: float) -> np.ndarray:
    """psi_i = min((tau_i + 1)^rho, psi_cap), or 0 if unseen or staler than the cutoff."""
    psi = np.minimum((np.asarray(tau, dtype=np.float64) + 1.0) ** rho, psi_cap)
    keep = np.asarray(seen, dtype=bool)
    if cutoff_rounds is not None:
        keep = keep & (tau <= cutoff_rounds)
    return np.where(keep, psi, 0.0)


class FedARState(TypedDict):
    """The latest normalised update G_i per client and the base round it came from (-1: none)."""

    table: Tensors
    last_round: np.ndarray


class FedAR(TableRule):
    """FedAR; the state is ``{"table": latest G_i, "last_round": base round of G_i (-1: none)}``."""

    cfg: FedARConfig

    def init(self, params: Params, n_samples: np.ndarray) -> FedARState:
        n = len(n_samples)
        return {"table": zeros(params, n), "last_round": np.full(n, -1, dtype=np.int64)}

    def aggregate(self, state: FedARState, params: Params, outcome: RoundOutcome,
                  updates: Sequence[ClientUpdate]) -> Step[FedARState]:
        last = state["last_round"].copy()
        received = [u for u in ordered(updates, len(last)) if u.base_round > last[u.client]]
        last[[u.client for u in received]] = [u.base_round for u in received]
        new_state: FedARState = {"table": store(state["table"], received, self.local_lr),
                                 "last_round": last}
        seen = last >= 0
        tau = np.where(seen, outcome.round - last, 0)
        psi = rectification_weights(tau, seen, self.cfg.rho, self.cfg.cutoff_rounds,
                                    self.cfg.psi_cap)
        n_t = int(np.count_nonzero(psi))
        n_late = sum(u.base_round < outcome.round for u in received)
        metrics = report(len(received), n_t > 0, n_received=len(received) - n_late,
                         n_late_stored=n_late, n_contributing=n_t)
        if n_t == 0:
            return params, new_state, metrics
        direction = weighted_rows(new_state["table"], psi / n_t)
        eta = self.cfg.server_lr * self.local_lr * self.lr_schedule.scale(outcome.round)
        return descend(params, direction, eta), new_state, metrics
