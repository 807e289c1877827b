"""Risk-aware federated learning over a Random Access Model (CVaR), server side.

Theodoropoulos, Nikolakakis, Kalogerias, arXiv 2309.14176 (2023), official code
PeriklisTheodoropoulos/risk-aware-FL (docs/algorithms.md §2). The objective over the users'
(unknown) relay distribution p is

    min_{theta, t}  E_{i~p}[ lam f_i(theta) + (1 - lam)(t + (f_i(theta) - t)_+ / alpha) ],

the joint (theta, t) form of lam E[f] + (1 - lam) CVaR_alpha[f]. The server holds the pair
(theta, t) (t starts at ``t0``) and sends it to the clients; the ``cvar`` local rule runs
SGD on the pair with separate step sizes (``task.lr`` for theta, ``lr_t`` for t) and
returns theta' (as ``delta``) and t' (``CVaRResult.t``, read as ``extra["t"]``). The server
adopts the pair of the user the relay let through; when more than one gets through it
averages their pairs (uniformly: an extension, the code uses exactly one user per round);
an empty round changes nothing.

Where the paper's code and docs/algorithms.md differ (§8.1), this follows docs/algorithms.md: the
trade-off weight is called ``lam`` (the code's ``gamma``) and weights the expectation; f
is the minibatch-mean loss; only the relayed user trains ("pick, then train", which is
equal in law to the MNIST script's "all train, then pick"); no softmax before the
cross-entropy; which users get through is decided by the network (``network.mac.kind =
"relay"``), not by this rule, and the server never reads the relay probabilities.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from simfl.algorithms.fedavg import FedAvg
from simfl.algorithms.report import N_AGGREGATED, STEPPED, report
from simfl.algorithms.update_table import Params, Step
from simfl.core.config.server import CVaR as CVaRConfig
from simfl.core.config.server import FedAvg as FedAvgConfig
from simfl.core.records import ClientUpdate, CVaRPayload, RoundOutcome


def cvar(losses: np.ndarray, p: np.ndarray, alpha: float) -> float:
    """CVaR_alpha of a discrete loss distribution: min_t t + E(Z - t)_+ / alpha.

    The minimum is attained at one of the support points, so they are all tried.
    """
    losses, p = np.asarray(losses, dtype=np.float64), np.asarray(p, dtype=np.float64)
    return float(min(t + np.dot(p, np.maximum(losses - t, 0.0)) / alpha for t in losses))


class CVaR:
    """The state is ``{"t": the VaR variable}``; the model is the global parameters."""

    def __init__(self, cfg: CVaRConfig, local_lr: float) -> None:
        self.cfg = cfg
        self._average = FedAvg(FedAvgConfig(weighting="uniform"), local_lr)

    def init(self, params: Params, n_samples: np.ndarray) -> dict[str, float]:
        return {"t": float(self.cfg.t0)}

    def client_payload(self, state: dict[str, float], client: int) -> CVaRPayload:
        c = self.cfg
        return CVaRPayload(t=state["t"], alpha=c.alpha, lam=c.lam, lr_t=c.lr_t)

    def aggregate(self, state: dict[str, float], params: Params, outcome: RoundOutcome,
                  updates: Sequence[ClientUpdate]) -> Step[dict[str, float]]:
        if not updates:
            return params, state, report(0, False, n_received=0)
        missing = [u.client for u in updates if "t" not in u.extra]
        if missing:
            raise ValueError(f"cvar needs extra['t'] from the cvar local rule; clients {missing} "
                             "sent none")
        new_params, _, averaged = self._average.aggregate(None, params, outcome, updates)
        ordered = sorted(updates, key=lambda u: u.client)  # sum independent of arrival order
        t = float(np.mean([float(u.extra["t"]) for u in ordered]))
        return new_params, {"t": t}, report(int(averaged[N_AGGREGATED]), bool(averaged[STEPPED]),
                                            n_received=len(updates), t=t)
