"""FedCS client selection (Nishio & Yonetani, ICC 2019, Algorithm 2), a round policy.

The server knows, for each candidate k, when its update can be ready,
``ready_k = download_s_k + compute_s_k`` after the round opens, and how long its upload
takes alone on the band, ``upload_s_k``. Uploads are scheduled one after another
(the paper's sequential upload). With the selected clients S scheduled in order, the
time the last upload ends, Theta(S), grows by adding k as

    Theta(S + k) = max(Theta(S), ready_k) + upload_s_k.

Greedy rule: start with S empty and Theta = 0; repeatedly take the remaining candidate
whose addition lengthens the schedule the least (the paper's argmax of
1 / (Theta(S + k) - Theta(S)); ties to the lower id) and remove it from the remaining;
keep it when the round still ends in time, Theta(S + k) <= deadline_s x
``deadline_fraction``, else drop it. Stop when no candidate remains. The selection has
no size limit: as many as fit. Downloads happen in parallel (each client's own link or
one broadcast), which is why they enter only through ``ready_k``.

The policy decides the selection only (a sampler in effect); whether the MAC actually
serves the uploads one at a time is the MAC's business (``tdma`` does; the ``ideal`` MAC
lets them overlap, so the estimate is then conservative).
"""

from __future__ import annotations

import numpy as np

from simfl.core.config.policy import FedCS
from simfl.core.registry import implements
from simfl.core.round_policy import Allocation, RoundState


def fedcs_order(ready_s: np.ndarray, upload_s: np.ndarray, limit_s: float
                ) -> tuple[list[int], float]:
    """The positions FedCS selects, in upload order, and the schedule's end (s)."""
    remaining = list(range(len(ready_s)))
    chosen: list[int] = []
    theta = 0.0
    while remaining:
        ends = [max(theta, float(ready_s[i])) + float(upload_s[i]) for i in remaining]
        best = int(np.argmin(ends))  # the least increase; argmin keeps the first (lower id)
        position = remaining.pop(best)
        if ends[best] <= limit_s:
            chosen.append(position)
            theta = ends[best]
    return chosen, theta


@implements(FedCS)
class FedCSPolicy:
    """Selects the most candidates whose update and sequential upload fit the deadline."""

    def __init__(self, cfg: FedCS) -> None:
        self.cfg = cfg

    def decide(self, state: RoundState) -> Allocation:
        ready_s = state.download_s + state.compute_s
        order, _ = fedcs_order(ready_s, state.upload_s,
                               state.deadline_s * self.cfg.deadline_fraction)
        return Allocation(selected=sorted(int(state.clients[i]) for i in order))
