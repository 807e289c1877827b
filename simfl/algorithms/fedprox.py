"""FedProx, server side.

Li, Sahu, Zaheer, Sanjabi, Talwalkar, Smith, "Federated Optimization in Heterogeneous
Networks", MLSys 2020, Algorithm 2. Each selected client approximately minimises
h_k(w; w_t) = F_k(w) + (mu/2) ||w - w_t||^2 (eq. 2) from w_t; the server averages what
arrives exactly as :class:`~simfl.algorithms.fedavg.FedAvg` does (same ``weighting``
choices: the paper's MD sampling with a plain average is ``sampler.kind = "md"`` with
``weighting = "multiplicity"``). The proximal term is the ``prox`` local rule's job: the
payload ``ProxPayload(mu)`` asks for it. Not modelled: the paper's gamma-inexact solutions and
variable local work per device (every client runs the task's local work); ``mu = 0``
is FedAvg.
"""

from __future__ import annotations

from simfl.algorithms.fedavg import FedAvg
from simfl.core.config.server import FedProx as FedProxConfig
from simfl.core.records import ProxPayload


class FedProx(FedAvg):
    """FedAvg aggregation; the client payload carries mu for the ``prox`` local rule."""

    cfg: FedProxConfig

    def client_payload(self, state: None, client: int) -> ProxPayload:
        return ProxPayload(float(self.cfg.mu))
