"""SCAFFOLD, server side.

Karimireddy et al., "SCAFFOLD: Stochastic Controlled Averaging for Federated Learning",
ICML 2020, Algorithm 1 with option II control variates (docs/algorithms.md §1.6). Client i
runs corrected SGD y <- y - eta_l (g_i(y) - c_i + c) from x and sends Delta y_i = y - x
(``ClientUpdate.delta``) and Delta c_i = c_i^+ - c_i (``ScaffoldResult.delta_c``, read
as ``extra["delta_c"]``, a dict like the parameters). The server applies

    x <- x + eta_g * (1/|S_t|) sum_{i in S_t} Delta y_i,
    c <- c + (1/N) sum_{i in S_t} Delta c_i,

and, because the client controls c_i live in the aggregator state here, also
c_i <- c_i + Delta c_i. ``client_payload(state, i)`` returns ``ScaffoldPayload(c, c_i)``,
what the local rule needs. An empty round changes nothing. The local corrected-SGD
rule is not part of this module.
"""

from __future__ import annotations

from typing import Sequence, TypedDict

import numpy as np
import torch

from simfl.algorithms.report import report
from simfl.algorithms.update_table import Params, Step, Tensors, cast, ordered, zeros
from simfl.core.config.server import Scaffold as ScaffoldConfig
from simfl.core.records import ClientUpdate, RoundOutcome, ScaffoldPayload


class ScaffoldState(TypedDict):
    """The global control variate c, and one row per client of the controls c_i."""

    c: Tensors
    c_i: Tensors


class Scaffold:
    """SCAFFOLD; the state is ``{"c": global control, "c_i": one control per client}``."""

    def __init__(self, cfg: ScaffoldConfig, local_lr: float) -> None:
        self.cfg = cfg

    def init(self, params: Params, n_samples: np.ndarray) -> ScaffoldState:
        c = {k: torch.zeros_like(v) for k, v in params.items()}
        return {"c": c, "c_i": zeros(params, len(n_samples))}

    def client_payload(self, state: ScaffoldState, client: int) -> ScaffoldPayload:
        return ScaffoldPayload({k: v.clone() for k, v in state["c"].items()},
                               {k: rows[client].clone() for k, rows in state["c_i"].items()})

    def aggregate(self, state: ScaffoldState, params: Params, outcome: RoundOutcome,
                  updates: Sequence[ClientUpdate]) -> Step[ScaffoldState]:
        c, c_i = state["c"], state["c_i"]
        n = len(next(iter(c_i.values())))
        received = ordered(updates, n)
        if not received:
            return params, state, report(0, False, n_received=0)
        missing = [u.client for u in received if "delta_c" not in u.extra]
        if missing:
            raise ValueError(f"scaffold needs extra['delta_c'] from the scaffold local rule; "
                             f"clients {missing} sent none")
        idx = [u.client for u in received]
        new_params: Tensors = {}
        new_c: Tensors = {}
        new_ci: Tensors = {}
        for name, x in params.items():
            dy = torch.stack([cast(u.delta[name], x) for u in received])
            dc = torch.stack([cast(u.extra["delta_c"][name], c[name]) for u in received])
            new_params[name] = x + self.cfg.server_lr * dy.mean(dim=0)
            new_c[name] = c[name] + dc.sum(dim=0) / n
            rows = c_i[name]
            at = torch.tensor(idx, dtype=torch.long, device=rows.device)
            new_ci[name] = rows.index_put((at,), rows[at] + cast(dc, rows))
        return (new_params, {"c": new_c, "c_i": new_ci},
                report(len(received), True, n_received=len(received)))
