"""The cloud phase of a hierarchical round: edge models up the backhaul, the cloud's down.

Each edge server sends its model to the cloud over its own link (a transfer takes
``latency_s + 8 * model_bytes / rate_bps`` and is lost with probability ``p_loss``, one
attempt). The cloud aggregates when every edge's upload has ended (arrived or lost) or
at its deadline ``cloud_deadline_s`` (if any) after the edge round closed, whichever is first;
an upload that ends exactly at the deadline is on time. It then sends the new model to
every edge at once (each over its own link, each lost with ``p_loss``); the phase ends
when the slowest of those transfers ends. When no edge model arrived the cloud has
nothing new to send and the phase ends at the aggregation time.

Assumptions: the backhaul is wired and dedicated (no contention between edges, no
energy charged, no retransmission); the model is the same size both ways.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from simfl.core.config.hierarchy import Backhaul


@dataclass(frozen=True)
class CloudPhase:
    """What the backhaul did in one cloud phase."""

    edges_up: tuple[int, ...]  # edges whose model reached the cloud in time
    edges_down: tuple[int, ...]  # edges that received the cloud's model
    t_aggregate_s: float  # when the cloud aggregated
    t_end_s: float  # when the last downlink transfer ended


def transfer_s(link: Backhaul, model_bytes: int) -> float:
    """The duration of one model transfer over ``link``."""
    if link.rate_bps is None:  # an infinite rate
        return link.latency_s
    return link.latency_s + 8.0 * model_bytes / link.rate_bps


def cloud_phase(t_close_s: float, links: Sequence[Backhaul], model_bytes: int,
                cloud_deadline_s: float | None, rng: np.random.Generator) -> CloudPhase:
    """The cloud phase after an edge round that closed at ``t_close_s``.

    ``links`` holds each edge's backhaul (one per edge). ``rng`` draws one uniform per
    edge for the uploads, then one per edge for the downloads (always both, so the
    draws of a round never depend on its outcome).
    """
    n = len(links)
    duration_s = np.array([transfer_s(link, model_bytes) for link in links], dtype=float)
    p_loss = np.array([link.p_loss for link in links], dtype=float)
    lost_up = rng.random(n) < p_loss
    lost_down = rng.random(n) < p_loss
    ended_s = t_close_s + duration_s
    t_deadline_s = t_close_s + (math.inf if cloud_deadline_s is None else cloud_deadline_s)
    up = ~lost_up & (ended_s <= t_deadline_s)
    t_aggregate_s = float(min(t_deadline_s, ended_s.max())) if n else t_close_s
    if not up.any():
        return CloudPhase((), (), t_aggregate_s, t_aggregate_s)
    t_end_s = t_aggregate_s + float(duration_s.max())
    return CloudPhase(tuple(np.flatnonzero(up).tolist()),
                      tuple(np.flatnonzero(~lost_down).tolist()), t_aggregate_s, t_end_s)
