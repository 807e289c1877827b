"""Client samplers: which of the clients the server can see it invites to a round."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from simfl.core.config.node import Choice, non_negative, positive, require
from simfl.core.config.papers import FEDAVG, MIFA


@dataclass(frozen=True)
class Sampler(Choice, point="samplers"):
    """Which clients the server invites to a round."""


@dataclass(frozen=True)
class Uniform(Sampler):
    """Uniformly at random without replacement, from the available clients or from all.

    With ``pool = "all"`` the server does not know who is online: invited clients that
    are offline count as missing with reason ``offline``.
    """

    kind = "uniform"
    paper = FEDAVG
    pool: Literal["available", "all"] = "available"


@dataclass(frozen=True)
class AllAvailable(Sampler):
    """Every available client, ignoring clients_per_round."""

    kind = "all_available"
    paper = MIFA


@dataclass(frozen=True)
class Md(Sampler):
    """k draws with replacement, probability proportional to n_k, among the available clients.

    Each distinct drawn client is invited once; how often it was drawn travels with the
    round (``RoundOutcome.multiplicity``) so that ``fedavg`` with
    ``weighting = "multiplicity"`` counts its model that many times (plain average over
    the k draws, docs/algorithms.md §4.3). Pair it with that weighting: data weighting would
    count the data sizes twice.
    """

    kind = "md"
    paper = ("Li et al., On the Convergence of FedAvg on Non-IID Data, ICLR 2020 (scheme I); "
             "Li et al., Federated Optimization in Heterogeneous Networks (FedProx), MLSys 2020")


@dataclass(frozen=True)
class PowerOfChoice(Sampler):
    """Query d candidates' local losses on the global model, invite the k with the highest.

    Candidates: ``d`` available clients drawn proportionally to n_k without replacement
    (Cho et al.); ``d = null`` asks every available client (the FedGS code's variant).
    The query is a real exchange: the model goes down, the client evaluates its loss
    over its local data and sends back one number (8 bytes); it takes simulated time (at most
    ``server.deadline_s``) before the round's invitations and is counted apart from
    training (``queried_losses`` in ``summary.json``). Clients whose reply is lost are
    not invited.
    """

    kind = "power_of_choice"
    paper = ("Cho, Wang, Joshi, Towards Understanding Biased Client Selection in Federated "
             "Learning, AISTATS 2022 (Power-of-Choice)")
    d: int | None = None

    def validate(self) -> None:
        positive(self, "d")


@dataclass(frozen=True)
class FedGS(Sampler):
    """FedGS: spread the invitees over a client-similarity graph while evening out counts.

    Before round 0 every client trains once from the initial model (a graph-building
    exchange, charged in simulated time, counted apart from training) and the server
    builds the data-distribution-dependency graph (3DG) from ``feature``: ``logit``
    (functional similarity: mean logits on one Gaussian noise batch), ``update`` (the
    local update), ``oracle`` (label histograms, no exchange) or ``optimum`` (each
    client's optimal linear-softmax parameters (W_k, b_k) on its own data, ridge-penalised,
    no exchange). Each round maximises
    alpha x mean pairwise graph distance minus the change of the sample-count variance
    (docs/algorithms.md §4.2): exact enumeration up to ``exact_limit`` candidate sets, else
    greedy construction and 1-swap local search for at most ``max_swaps`` swaps.
    """

    kind = "fedgs"
    paper = ("Wang et al., FedGS: Federated Graph-based Sampling with Arbitrary Client "
             "Availability, AAAI 2023")
    feature: Literal["logit", "update", "oracle", "optimum"] = "logit"
    alpha: float = 0.1
    epsilon: float = 0.01
    sigma: float = 0.1
    noise_batch: int = 128
    exact_limit: int = 20000
    max_swaps: int = 1000

    def validate(self) -> None:
        non_negative(self, "alpha", "epsilon", "max_swaps")
        positive(self, "sigma", "noise_batch", "exact_limit")
        require(self.epsilon < 1, "epsilon", self.epsilon,
                "a number in [0, 1): normalised similarities lie in [0, 1]")


@dataclass(frozen=True)
class LongestAbsent(Sampler):
    """The k available clients absent the longest (never seen first; ties by lowest id).

    A client's last participation is the last round its update was received.
    """

    kind = "longest_absent"
    paper = ("Yan et al., Distributed Non-Convex Optimization with Sublinear Speedup under "
             "Intermittent Client Availability (FedLaAvg), INFORMS J. Computing, Algorithm 1")


@dataclass(frozen=True)
class WaitGroup(Sampler):
    """A group of k clients drawn uniformly from all N, re-invited until every member has reported.

    The ``fedavg_wait`` reading of docs/algorithms.md §1.4 (MIFA's FedAvg baseline): each
    round invites the members still owed that are available; once all k have reported,
    the next group is drawn. Pair it with the ``fedavg_s_wait`` aggregator, which
    keeps the model frozen until the whole group is in. A round in which no owed member
    is available lasts until its deadline (the server waits for the group). The code
    has no deadline: a member whose local work and transfers take longer than
    ``server.deadline_s`` never reports and the group never completes, so give this
    sampler a deadline above the slowest client's round time.
    """

    kind = "wait_group"
    paper = f"{MIFA}: FedAvg-with-waiting baseline"
