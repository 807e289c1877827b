"""Hierarchical rounds on the simulated clock: the edge round, then every ``kappa2``-th
round the cloud phase (:mod:`simfl.sim.hierarchy.backhaul`).

The edge round is the ordinary synchronous round (clients download from their edge,
train and upload to it under ``server.deadline_s``); every edge aggregates at its close.
A client's edge is ``server.hierarchy.edge_of``'s entry, or the access point it is
associated with when the round opens. The round's outcome carries a
:class:`~simfl.core.tiers.TierRecord`; in a cloud round its ``t_close_s`` is the end of
the cloud phase (when every edge holds the model the next round starts from) and its
``t_deadline_s`` is at least that.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from simfl.core.config.hierarchy import Hierarchy
from simfl.core.records import RoundOutcome
from simfl.core.tiers import TierRecord
from simfl.sim.hierarchy.backhaul import cloud_phase
from simfl.sim.simulation import SelectFn, Simulation


class TieredSimulation(Simulation):
    """A :class:`~simfl.sim.simulation.Simulation` whose rounds are edge rounds, every
    ``hierarchy.kappa2``-th of them followed by the cloud phase.

    Parameters
    ----------
    hierarchy:
        The edge servers, their backhaul and the tiers' periods and deadline.
    n_edges:
        How many edge servers there are.
    **kwargs:
        The :class:`~simfl.sim.simulation.Simulation`'s.
    """

    def __init__(self, *, hierarchy: Hierarchy, n_edges: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.hierarchy, self.n_edges = hierarchy, n_edges
        self.backhaul = tuple(hierarchy.link(e) for e in range(n_edges))
        self._edge_of = np.asarray(hierarchy.edge_of, dtype=np.int64)
        if not len(self._edge_of) and self.radio_map is None:  # one edge: everyone's
            self._edge_of = np.zeros(len(self.n_samples), dtype=np.int64)

    def edge_of(self) -> np.ndarray:
        """Each client's edge now (its access point with the shared radio)."""
        if self.radio_map is not None and not self.hierarchy.edge_of:
            return np.asarray(self.radio_map.ap, dtype=np.int64)
        return self._edge_of

    def run_round(self, round: int, select: SelectFn) -> RoundOutcome:
        """The edge round, and the cloud phase when the round ends a cloud period."""
        outcome = super().run_round(round, select)
        edge_of = self.edge_of()
        edges = tuple(edge_of[list(outcome.selected)].tolist())
        t_edge_s = outcome.t_close_s
        if (round + 1) % self.hierarchy.kappa2:
            return dataclasses.replace(outcome, tier=TierRecord(
                edges, self.n_edges, False, t_edge_close_s=t_edge_s))
        phase = cloud_phase(t_edge_s, self.backhaul, self.model_bytes,
                            self.hierarchy.cloud_deadline_s,
                            self.rngs.stream(f"backhaul/round/{round}"))
        if phase.t_end_s > self.env.now:
            self.env.run(until=phase.t_end_s)
        samples = np.bincount(edge_of, weights=self.n_samples, minlength=self.n_edges)
        # events.csv: the cloud aggregated (edge models in, edges the new model reached)
        self.log(phase.t_aggregate_s, "cloud_aggregation", round,
                 detail=f"{len(phase.edges_up)} up, {len(phase.edges_down)} down")
        tier = TierRecord(edges, self.n_edges, True, phase.edges_up, phase.edges_down,
                          tuple(int(n) for n in samples), t_edge_s)
        return dataclasses.replace(outcome, t_close_s=phase.t_end_s, tier=tier,
                                   t_deadline_s=max(outcome.t_deadline_s, phase.t_end_s))
