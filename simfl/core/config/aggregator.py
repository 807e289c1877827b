"""The server's aggregation rules (``server.algorithm``): FedAvg and the availability-robust family."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from simfl.core.config.checks import MAX_STEP_SIZE, at_most, step_size
from simfl.core.config.node import Choice, non_negative, positive, probability, require
from simfl.core.config.papers import FEDAR, FEDAVG, MIFA, RANDOM_ACCESS


@dataclass(frozen=True)
class Aggregator(Choice, point="aggregators"):
    """How the server turns received client updates into a new global model.

    ``local_rule`` names the client-side training rule the aggregator relies on.
    """

    local_rule: ClassVar[str] = "sgd"

    @property
    def wants_late(self) -> bool:
        """Whether uploads that land after their round closed are delivered to it."""
        return False


@dataclass(frozen=True)
class FedAvg(Aggregator):
    """Federated averaging of the received updates, weighted by data size or uniformly.

    ``weighting = "multiplicity"`` counts each update as often as the ``md`` sampler
    drew its client (plain average over the draws).
    """

    kind = "fedavg"
    paper = FEDAVG
    weighting: Literal["data", "uniform", "multiplicity"] = "data"
    server_lr: float = 1.0

    def validate(self) -> None:
        step_size(self, "server_lr")


@dataclass(frozen=True)
class FedAvgIS(Aggregator):
    """FedAvg with importance weights 1/p_i from known availability probabilities (unbiased).

    ``p`` is the probability that client i's update is received in a round: one number
    for all clients or a list with one per client (as ``population.availability.p``).
    """

    kind = "fedavg_is"
    paper = f"{MIFA}: FedAvg-IS baseline"
    p: float | tuple[float, ...] = 1.0
    server_lr: float = 1.0

    def validate(self) -> None:
        step_size(self, "server_lr")
        probability(self, "p")
        values = self.p if isinstance(self.p, tuple) else (self.p,)
        require(len(values) > 0 and min(values) > 0, "p", self.p,
                "probabilities in (0, 1] (the update is divided by p_i)")


@dataclass(frozen=True)
class FedAvgS(FedAvg):
    """FedAvg over at most S available clients, averaged uniformly by default.

    FedAR's "at most S" baseline (docs/algorithms.md §1.4, ``server.clients_per_round =
    S``): the sampler invites min(S, |A_t|) available clients and the server averages
    what arrives, uniformly by default (as MIFA's ``sgd.py``): FedAvg with that default.
    The group-waiting reading is its own kind, :class:`FedAvgSWait`.
    """

    kind = "fedavg_s"
    paper = f"{FEDAR}; Gu et al., MIFA, NeurIPS 2021: FedAvg baselines"
    weighting: Literal["data", "uniform"] = "uniform"


@dataclass(frozen=True)
class FedAvgSWait(FedAvg):
    """FedAvg waiting for a group of S clients drawn from all N (MIFA's ``fedavg.py``).

    docs/algorithms.md §1.4, S = ``server.clients_per_round``: with the ``wait_group``
    sampler (required), the S members report over as many rounds as it takes; the model
    stays frozen meanwhile and w_{t+1} = (1/S) sum_i y_i once the last one is in
    (``weighting = "data"``: weights n_i / sum n_j instead).
    """

    kind = "fedavg_s_wait"
    paper = f"{MIFA}: FedAvg-with-waiting baseline (official code fedavg.py)"
    weighting: Literal["data", "uniform"] = "uniform"


@dataclass(frozen=True)
class Mifa(Aggregator):
    """MIFA: step along the mean of every client's latest update, stale or fresh."""

    kind = "mifa"
    paper = f"{MIFA}, Algorithm 1"
    init: Literal["wait_for_all", "zeros"] = "wait_for_all"
    server_lr: float = 1.0

    def validate(self) -> None:
        step_size(self, "server_lr")


@dataclass(frozen=True)
class FedAR(Aggregator):
    """FedAR: latest updates as surrogates, rectified by staleness weights min((tau+1)^rho, cap).

    ``late_policy``: ``"discard"`` (docs/algorithms.md §1.1's default) interrupts every device
    still busy when its round closes. ``"store"`` lets it finish in the background; its
    upload, landing in a later round, is trained from the model of the round it was
    invited in and stored as G_i with tau_i = rounds since that model (§1.1). Store
    needs ``network.mac.kind = "ideal"`` (a shared MAC schedules uplinks round by round,
    and a background upload belongs to no round) and no
    ``population.sessions`` (a session restarts the model, so an update computed on the
    previous session's model has no place in the new table).
    """

    kind = "fedar"
    paper = FEDAR
    rho: float = 0.5
    cutoff_rounds: int | None = None
    psi_cap: float = 2.0
    late_policy: Literal["discard", "store"] = "discard"
    server_lr: float = 1.0

    def validate(self) -> None:
        step_size(self, "server_lr")
        positive(self, "psi_cap")
        non_negative(self, "rho", "cutoff_rounds")

    @property
    def wants_late(self) -> bool:
        return self.late_policy == "store"


@dataclass(frozen=True)
class FedVARP(Aggregator):
    """FedVARP: SAGA-style variance reduction with a server memory of each client's last update."""

    kind = "fedvarp"
    paper = ("Jhunjhunwala et al., FedVARP: Tackling the Variance Due to Partial Client "
             "Participation in Federated Learning, UAI 2022, Algorithm 1")
    server_lr: float = 1.0

    def validate(self) -> None:
        step_size(self, "server_lr")


@dataclass(frozen=True)
class FedLaAvg(Aggregator):
    """FedLaAvg: step along the running mean of every client's latest gradient sum, every round.

    ``loss_scaling`` asks the local rule to scale client i's loss by N n_i / n (the
    aggregator hands the factor out in the client payload; it cannot apply it itself).
    ``warmup_rounds`` rounds collect updates without moving the model.
    """

    kind = "fedlaavg"
    paper = ("Yan et al., Distributed Non-Convex Optimization with Sublinear Speedup under "
             "Intermittent Client Availability, INFORMS J. Computing (arXiv 2002.07399), Algorithm 1")
    loss_scaling: bool = False
    warmup_rounds: int = 0
    server_lr: float = 1.0

    def validate(self) -> None:
        step_size(self, "server_lr")
        non_negative(self, "warmup_rounds")

    @property
    def local_rule(self) -> str:  # type: ignore[override]
        return "scaled_sgd" if self.loss_scaling else "sgd"


@dataclass(frozen=True)
class Scaffold(Aggregator):
    """SCAFFOLD (server side): average the model deltas, move the global control variate."""

    kind = "scaffold"
    local_rule = "scaffold"
    paper = ("Karimireddy et al., SCAFFOLD: Stochastic Controlled Averaging for Federated "
             "Learning, ICML 2020, Algorithm 1 (option II)")
    server_lr: float = 1.0

    def validate(self) -> None:
        step_size(self, "server_lr")


@dataclass(frozen=True)
class FedProx(FedAvg):
    """FedProx: FedAvg whose clients add the proximal term (mu/2)||w - w_t||^2 to their loss."""

    kind = "fedprox"
    local_rule = "prox"
    paper = ("Li et al., Federated Optimization in Heterogeneous Networks, MLSys 2020, "
             "Algorithm 2 (local objective eq. 2)")
    mu: float = 0.1

    def validate(self) -> None:
        super().validate()
        non_negative(self, "mu")
        at_most(self, MAX_STEP_SIZE, "mu", why="a larger penalty overflows training")


@dataclass(frozen=True)
class CVaR(Aggregator):
    """Risk-aware FL: SGD on (model, VaR level t) of lam*E[f] + (1-lam)*CVaR_alpha[f]; adopt the relayed pair.

    ``alpha`` is the risk level (1: risk-neutral), ``lam`` the weight of the mean loss
    (the code's ``gamma``), ``lr_t`` the step size of t (the model's is ``task.lr``),
    ``t0`` the initial t. Defaults: the three-user blobs example (docs/algorithms.md §2).
    """

    kind = "cvar"
    local_rule = "cvar"
    paper = f"{RANDOM_ACCESS} (risk-aware CVaR objective)"
    alpha: float = 0.1
    lam: float = 0.1
    lr_t: float = 1e-3
    t0: float = 0.0

    def validate(self) -> None:
        require(0.0 < self.alpha <= 1.0, "alpha", self.alpha, "a risk level in (0, 1]")
        probability(self, "lam")
        non_negative(self, "lr_t")
        at_most(self, MAX_STEP_SIZE, "lr_t", why="a larger step size overflows training")
