"""Hierarchical client-edge-cloud FL (HierFAVG): edge servers between clients and cloud.

Liu, Zhang, Song and Letaief, "Client-Edge-Cloud Hierarchical Federated Learning", ICC
2020, Algorithm 1: every client runs ``kappa1`` local rounds between edge aggregations,
every edge aggregates its clients ``kappa2`` times between cloud aggregations, and the
cloud averages the edge models weighted by the data under each edge. simfl's round is
one edge aggregation (every edge at once); every ``kappa2``-th round also ends with the
cloud's. The edge servers talk to the cloud over their own backhaul links
(:class:`Backhaul`), under their own deadline (``cloud_deadline_s``). docs/hierarchical.md.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from simfl.core.config.checks import non_negative, positive, probability, require
from simfl.core.config.node import Node, at_most

if TYPE_CHECKING:
    from simfl.core.config.scenario import Scenario

#: the aggregators an edge server runs: those that keep no per-client state across rounds
EDGE_AGGREGATORS = ("fedavg", "fedprox")
#: the most edge servers a hierarchy may have
MAX_EDGES = 10_000
#: the longest backhaul latency (seconds, about 30 years) and the slowest backhaul rate
#: (bits per second): beyond them a transfer's time is no longer a finite number
MAX_BACKHAUL_LATENCY_S = 1e9
MIN_BACKHAUL_RATE_BPS = 1.0


@dataclass(frozen=True)
class Backhaul(Node):
    """One edge server's link to the cloud, the same both ways.

    A transfer of the model takes ``latency_s + 8 * model_bytes / rate_bps`` (``rate_bps``
    null: an infinite rate, ``latency_s`` alone) and is lost with probability ``p_loss`` (one
    attempt, no retry: a lost edge model misses that cloud aggregation; a lost cloud
    model leaves its edge on its own model). ``latency_s`` is at most 1e9 s and
    ``rate_bps`` at least 1 b/s.
    """

    rate_bps: float | None = None
    latency_s: float = 0.0
    p_loss: float = 0.0

    def validate(self) -> None:
        positive(self, "rate_bps")
        non_negative(self, "latency_s")
        probability(self, "p_loss")
        at_most(self, MAX_BACKHAUL_LATENCY_S, "latency_s",
                why="seconds: about 30 years; a longer delay leaves the clock infinite")
        require(self.rate_bps is None or self.rate_bps >= MIN_BACKHAUL_RATE_BPS, "rate_bps",
                self.rate_bps, f"null or a rate >= {MIN_BACKHAUL_RATE_BPS:g} b/s (a slower "
                "link leaves the clock infinite)")


@dataclass(frozen=True)
class Hierarchy(Node):
    """Edge servers between the clients and the cloud (HierFAVG).

    ``edge_of`` gives each client's edge server (one id per client, edges numbered from
    0); empty: one edge per access point of ``network.cells``, a client's edge being the
    access point it is associated with when a round opens (one edge without a radio).
    ``backhaul`` lists one link for every edge, or one link that every edge uses.
    ``kappa1`` multiplies each client's local work per edge round (``task.local_steps``
    or ``task.local_epochs``: HierFAVG's local updates per edge aggregation); the cloud
    aggregates after every ``kappa2``-th round. ``cloud_deadline_s`` is the cloud's wait
    for the edge models after the edge round closed (``server.deadline_s`` is the
    edges' wait for their clients); null: the cloud waits for every edge.
    """

    kappa1: int = 1
    kappa2: int = 1
    edge_of: tuple[int, ...] = ()
    backhaul: tuple[Backhaul, ...] = (Backhaul(),)
    cloud_deadline_s: float | None = None

    def validate(self) -> None:
        positive(self, "kappa1", "kappa2", "cloud_deadline_s")
        at_most(self, 10**6, "kappa1", "kappa2")
        require(0 < len(self.backhaul) <= MAX_EDGES, "backhaul", len(self.backhaul),
                f"a list of 1 to {MAX_EDGES} links (one for all edges, or one per edge)")
        for i, edge in enumerate(self.edge_of):
            require(0 <= edge < MAX_EDGES, f"edge_of[{i}]", edge,
                    f"an edge id in 0..{MAX_EDGES - 1}")
            require(len(self.backhaul) == 1 or edge < len(self.backhaul), f"edge_of[{i}]", edge,
                    f"a known edge: 0..{len(self.backhaul) - 1} (backhaul lists "
                    f"{len(self.backhaul)} edges)")

    def n_edges(self, n_access_points: int) -> int:
        """How many edge servers there are (``n_access_points`` when ``edge_of`` is empty)."""
        if not self.edge_of:
            return n_access_points
        return max(max(self.edge_of) + 1, len(self.backhaul))

    def link(self, edge: int) -> Backhaul:
        """Edge ``edge``'s backhaul link."""
        return self.backhaul[0] if len(self.backhaul) == 1 else self.backhaul[edge]


def check_hierarchy(scenario: Scenario) -> None:
    """The rules a hierarchy sets for the rest of the scenario (one line each)."""
    tiers = scenario.server.hierarchy
    if tiers is None:
        return
    key = "server.hierarchy"
    n_clients = scenario.task.n_clients
    require(not tiers.edge_of or len(tiers.edge_of) == n_clients, f"{key}.edge_of",
            f"{len(tiers.edge_of)} ids", f"one edge id per client ({n_clients}), or empty "
            "(one edge per access point)")
    n_access_points = len(scenario.network.cells.access_points)
    require(bool(tiers.edge_of) or n_access_points == 1 or scenario.network.radio is not None,
            "network.radio", None, "a radio table when server.hierarchy.edge_of is empty and "
            "network.cells lists several access points (association needs positions)")
    n_edges = tiers.n_edges(n_access_points)
    require(len(tiers.backhaul) in (1, n_edges), f"{key}.backhaul", f"{len(tiers.backhaul)} "
            "links", f"1 link or one per edge ({n_edges})")
    server = scenario.server
    require(server.algorithm.kind in EDGE_AGGREGATORS, "server.algorithm.kind",
            server.algorithm.kind, f"{' or '.join(EDGE_AGGREGATORS)} with server.hierarchy "
            "(an edge runs an aggregator that keeps no per-client state)")
    require(server.mode.kind == "sync", "server.mode.kind", server.mode.kind,
            "sync with server.hierarchy (edges aggregate in rounds)")
    require(server.optimizer.kind == "none", "server.optimizer.kind", server.optimizer.kind,
            "none with server.hierarchy (the cloud averages the edge models)")
    require(scenario.population.sessions is None, "population.sessions", "a sessions table",
            "none with server.hierarchy (a session restarts one global model)")
    task = scenario.task
    name, work, most = (("local_steps", task.local_steps, task.max_local_steps)
                        if task.local_steps is not None else
                        ("local_epochs", task.local_epochs or 1, task.max_local_epochs))
    require(work * tiers.kappa1 <= most, f"{key}.kappa1", tiers.kappa1,
            f"at most {most // work} with task.{name} = {work} (kappa1 x {name} <= {most:g})")


def edge_work(scenario: Scenario) -> Scenario:
    """``scenario`` with each client's local work per round multiplied by ``kappa1``, and
    ``kappa1`` then 1 (the work is scaled once); the same scenario without a hierarchy or
    with ``kappa1 = 1``."""
    tiers = scenario.server.hierarchy
    if tiers is None or tiers.kappa1 == 1:
        return scenario
    task = scenario.task
    if task.local_steps is not None:
        task = replace(task, local_steps=task.local_steps * tiers.kappa1)
    else:
        task = replace(task, local_epochs=(task.local_epochs or 1) * tiers.kappa1)
    server = replace(scenario.server, hierarchy=replace(tiers, kappa1=1))
    return replace(scenario, task=task, server=server)
