"""Time division on the uplink: each of a round's clients owns one slot of every frame,
or (``shared``) an equal share of the bandwidth all the time."""

from __future__ import annotations

import math

import numpy as np

from simfl.core.config.network import TdmaMac
from simfl.core.registry import implements
from simfl.sim.links.channel import Bursts
from simfl.sim.mac.access import GRID_EPS, IdealAccess


class TdmaAccess(IdealAccess):
    """Time division (``slots``) or equal bandwidth shares (``shared``) among a round's
    clients: no contention, as the ideal MAC, but each attempt's wall time and bursts
    follow the client's slots or share (:meth:`share`)."""

    cfg: TdmaMac

    def share(self, client: int, t_s: float, airtime_s: float) -> tuple[float, Bursts]:
        """Wall seconds of an attempt of ``airtime_s`` from ``t_s``, and its bursts."""
        wall_s = self.wall_time_s(client, t_s, airtime_s)
        return wall_s, self.bursts(client, t_s, airtime_s, wall_s)

    def open_round(self, round: int, started: np.ndarray) -> None:
        self._t_open_s = self.env.now
        self._n = max(len(started), 1)
        self._rank = {int(c): i for i, c in enumerate(started)}

    def wall_time_s(self, client: int, t_s: float, airtime_s: float) -> float:
        if self.cfg.mode == "shared":
            return airtime_s * self._n
        return tdma_finish_s(t_s - self._t_open_s, airtime_s, self._rank[client], self._n,
                             self.cfg.slot_s) + self._t_open_s - t_s

    def radio_s(self, client: int, airtime_s: float, wall_s: float) -> float:
        """Slots: the radio is on only in the client's own slots (its airtime) and waits
        for them in between; shared: it transmits for the whole, n times longer, attempt."""
        return wall_s if self.cfg.mode == "shared" else airtime_s

    def bursts(self, client: int, t_s: float, airtime_s: float, wall_s: float) -> Bursts:
        """Slots: the pieces of the client's own slots that carry the attempt (the last
        one ends with it); shared: the whole attempt."""
        if self.cfg.mode == "shared" or airtime_s <= 0:
            return ((0.0, wall_s),)
        pieces = tdma_bursts(t_s - self._t_open_s, airtime_s, self._rank[client], self._n,
                             self.cfg.slot_s)
        start_s, _ = pieces[-1]
        return pieces[:-1] + ((start_s, wall_s),)


def tdma_finish_s(ready_s: float, airtime_s: float, rank: int, n_slots: int,
                  slot_s: float) -> float:
    """When ``airtime_s`` of transmission ends that uses only slot ``rank`` of every frame.

    Frames of ``n_slots * slot_s`` start at time 0; the client may transmit from
    ``ready_s`` on, inside [k F + rank slot_s, k F + (rank + 1) slot_s) for k = 0, 1, ...
    """
    if airtime_s <= 0:
        return ready_s
    frame_s, offset_s = n_slots * slot_s, rank * slot_s
    k = math.floor((ready_s - offset_s) / frame_s)
    here_s = max(0.0, k * frame_s + offset_s + slot_s - ready_s)  # left of the current slot
    if airtime_s <= here_s:
        return ready_s + airtime_s
    rest_s = airtime_s - here_s
    more = max(1, math.ceil(rest_s / slot_s - GRID_EPS))  # further slots needed
    return (k + more) * frame_s + offset_s + rest_s - (more - 1) * slot_s


def tdma_bursts(ready_s: float, airtime_s: float, rank: int, n_slots: int,
                slot_s: float) -> Bursts:
    """When the radio is on for the transmission of :func:`tdma_finish_s`: the pieces of
    slot ``rank`` of each frame that carry ``airtime_s`` > 0 from ``ready_s`` on, as
    (start, end) offsets from ``ready_s``."""
    frame_s, offset_s = n_slots * slot_s, rank * slot_s
    k = math.floor((ready_s - offset_s) / frame_s)
    here_s = max(0.0, k * frame_s + offset_s + slot_s - ready_s)  # left of the current slot
    if airtime_s <= here_s:
        return ((0.0, airtime_s),)
    rest_s = airtime_s - here_s
    more = max(1, math.ceil(rest_s / slot_s - GRID_EPS))  # further slots needed
    pieces = [(0.0, here_s)] if here_s > GRID_EPS * slot_s else []  # (not float dust)
    for m in range(1, more + 1):
        start_s = (k + m) * frame_s + offset_s - ready_s
        pieces.append((start_s, start_s + (slot_s if m < more else rest_s - (more - 1) * slot_s)))
    return tuple(pieces)


implements(TdmaMac, TdmaAccess)  # the kind's access model (simfl.sim.mac.kinds builds it)
