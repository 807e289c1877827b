"""The columns ``rounds.csv`` gains in hierarchical FL (``server.hierarchy``)."""

from __future__ import annotations

from simfl.core.records import RoundOutcome

#: ``tier``: ``edge`` (the edges aggregated) or ``cloud`` (then the cloud too);
#: ``edges_up``: edge models that reached the cloud; ``edges_down``: edges the cloud's
#: model reached; ``t_edge_close_s``: when the edge round closed (``t_close_s`` is the
#: end of the cloud phase in a cloud round)
TIER_COLUMNS = ("tier", "edges_up", "edges_down", "t_edge_close_s")


def tier_row(outcome: RoundOutcome) -> tuple[str, int, int, float]:
    """The :data:`TIER_COLUMNS` values of a hierarchical round."""
    tier = outcome.tier
    if tier is None:
        raise ValueError(f"round {outcome.round} has no tier record in a hierarchical run")
    return tier.tier, len(tier.edges_up), len(tier.edges_down), tier.t_edge_close_s
