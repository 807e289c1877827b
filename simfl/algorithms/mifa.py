"""MIFA: Memory-augmented Impatient Federated Averaging.

Gu et al., "Fast Federated Learning in the Presence of Arbitrary Device
Unavailability", NeurIPS 2021, Algorithm 1 (official code MIFA_code ``fdu.py`` and
``fdu_no_wait.py``; docs/algorithms.md §1.2). The server keeps every client's latest
normalised update G_i = (w_base - y_i) / eta_l and steps along their mean over all N
clients, stale or fresh:

    G_i <- U_i for i in R_t;    w_{t+1} = w_t - eta_g * eta_l * (1/N) * sum_{i=1..N} G_i.

An empty round still moves the model along the stored table.

``init`` chooses how the table starts (docs/algorithms.md §8.5):

* ``"wait_for_all"`` (``fdu.py``, the paper's remark that every device takes part in the
  first round): the model is not updated until every client has a stored entry. The
  waiting rounds are still consumed (they count against ``run.rounds`` and simulated
  time); since the model does not move meanwhile, every stored entry was computed from
  w_0. The round in which the last client arrives applies the first update. The code's
  extra fill-in round, where all clients train once more from w_0, is not repeated.
* ``"zeros"`` (``fdu_no_wait.py``): the table starts at zero and updates start at once;
  unseen clients count as zero entries in the mean over N.

The code's learning-rate decay eta_t = eta_0/(t+1) is ``server.lr_schedule =
"inverse_round"`` (``lr_schedule``): round t's clients train with eta_t, each update is
normalised by the step size it was trained with, G_i = (w_t - y_i) / eta_t (the lr of
that round, :mod:`simfl.algorithms.update_table`), and the server steps with
eta_g * eta_t. t counts every simulator round, the wait-for-all rounds included (the
code starts t at the first training round).
"""

from __future__ import annotations

from typing import Sequence, TypedDict

import numpy as np

from simfl.algorithms.report import report
from simfl.algorithms.update_table import (Params, Step, TableRule, Tensors, descend, mean_rows,
                                           ordered, store, zeros)
from simfl.core.config.server import Mifa as MifaConfig
from simfl.core.records import ClientUpdate, RoundOutcome


class MifaState(TypedDict):
    """The latest normalised update U_i per client, and which clients sent one."""

    table: Tensors
    seen: np.ndarray


class Mifa(TableRule):
    """MIFA; the state is ``{"table": latest U_i per client, "seen": bool per client}``."""

    cfg: MifaConfig

    def init(self, params: Params, n_samples: np.ndarray) -> MifaState:
        n = len(n_samples)
        return {"table": zeros(params, n), "seen": np.zeros(n, dtype=bool)}

    def aggregate(self, state: MifaState, params: Params, outcome: RoundOutcome,
                  updates: Sequence[ClientUpdate]) -> Step[MifaState]:
        seen = state["seen"]
        received = ordered(updates, len(seen))
        seen = seen.copy()
        seen[[u.client for u in received]] = True
        new_state: MifaState = {"table": store(state["table"], received, self.local_lr),
                                "seen": seen}
        counts = {"n_received": len(received), "n_seen": int(seen.sum())}
        if self.cfg.init == "wait_for_all" and not seen.all():
            return params, new_state, report(len(received), False, **counts,
                                             waiting_for=int((~seen).sum()))
        eta = self.cfg.server_lr * self.local_lr * self.lr_schedule.scale(outcome.round)
        return (descend(params, mean_rows(new_state["table"]), eta), new_state,
                report(len(received), True, **counts))
