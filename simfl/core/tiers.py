"""What the edge and cloud tiers of a hierarchical round did (:class:`TierRecord`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TierRecord:
    """The tiers of one round of hierarchical FL (``RoundOutcome.tier``).

    Attributes
    ----------
    edges:
        The edge server of each invited client, aligned with ``RoundOutcome.selected``
        (where the client's update goes).
    n_edges:
        How many edge servers there are.
    cloud:
        Whether the round ends with a cloud aggregation.
    edges_up:
        The edges whose model reached the cloud before the cloud's deadline (sorted;
        empty in an edge-only round).
    edges_down:
        The edges that received the cloud's model (sorted; empty when ``edges_up`` is).
    edge_samples:
        The training samples under each edge when the cloud aggregates (its weight);
        empty in an edge-only round.
    t_edge_close_s:
        When the edge round closed (the client tier's close); the round's ``t_close_s``
        is the end of the cloud phase, when every edge holds the model the next round
        starts from.
    """

    edges: tuple[int, ...]
    n_edges: int
    cloud: bool
    edges_up: tuple[int, ...] = ()
    edges_down: tuple[int, ...] = ()
    edge_samples: tuple[int, ...] = ()
    t_edge_close_s: float = 0.0

    @property
    def tier(self) -> str:
        """``cloud`` when the round ends with a cloud aggregation, else ``edge``."""
        return "cloud" if self.cloud else "edge"
