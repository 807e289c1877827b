"""A band shared by the active uploads of each cell, reallocated at every start and finish.

An upload attempt joins its cell's band with all its bits left (:meth:`OfdmaAccess.serve`
returns the event that fires once they are served). At every join, finish and leave the
band settles the bits each active upload sent at its rate since the last change, asks
the scheduler for a new split (:mod:`simfl.sim.mac.band_split`) and schedules the one
next finish: a true discrete-event simulation, with no time steps. A newer schedule makes
the older finish events stale (they are ignored when they fire).

With a radio map, client k's rate on ``b`` Hz is ``b log2(1 + a_k / b)`` with
``a_k = P_k g_k / N0`` (mean received power; no fast fading: the link still decides
whether the attempt is lost). Without one there is one cell whose capacity is the
uplink's rate: client k's rate on a fraction f of the band is f times its attempt's link
rate (bits / airtime).
"""

from __future__ import annotations

import math

import numpy as np
import simpy

from simfl.core.config.network import OfdmaMac
from simfl.core.records import EventKind
from simfl.sim.mac.access import IdealAccess
from simfl.sim.mac.band_split import BandSplit
from simfl.sim.radio.capture import Air
from simfl.sim.radio.radio_map import RadioMap

#: bits below which an upload counts as served (float residue of the settling)
DONE_BITS = 1e-6


class _Upload:
    """One attempt in the band: its bits left, its full-band rate model and its event."""

    __slots__ = ("client", "left_bits", "rate_full_bps", "rate_bps", "done")

    def __init__(self, client: int, bits: float, rate_full_bps: float,
                 done: simpy.Event) -> None:
        self.client, self.left_bits, self.rate_full_bps = client, bits, rate_full_bps
        self.rate_bps = 0.0
        self.done = done


class OfdmaAccess(IdealAccess):
    """Uploads share their cell's band under ``cfg.scheduler`` (see
    :class:`~simfl.core.config.network.OfdmaMac`)."""

    cfg: OfdmaMac
    radio: RadioMap | None = None

    def attach(self, air: Air) -> None:
        self.radio = air.radio_map

    def open_round(self, round: int, started: np.ndarray) -> None:
        self._round = round
        self._started = started
        self._cells: dict[int, dict[int, _Upload]] = {}
        self._t_s = float(self.env.now)
        self._generation = getattr(self, "_generation", 0) + 1
        if not hasattr(self, "split"):  # one scheduler for the run (PF keeps averages)
            self.split = BandSplit(self.cfg, self.radio)
        self.split.new_round()

    def close_round(self) -> None:
        for cell in self._cells.values():
            cell.clear()
        self._generation += 1  # finish events still due are stale
        return None

    def share(self, client: int, t_s: float, airtime_s: float) -> tuple[float, float]:
        return airtime_s, airtime_s  # serve() sets the duration; the radio transmits throughout

    def serve(self, client: int, n_bits: float, airtime_s: float) -> simpy.Event:
        """The event that fires once ``n_bits`` of ``client``'s attempt (of ``airtime_s``
        on its own link) are served by the band."""
        if self.split.needs_plan:
            refused = self.split.plan(self._started, n_bits, self.deadline_s)
            for other in refused:
                if self.log is not None:
                    self.log(self.env.now, EventKind.BAND_REFUSED, self._round, int(other),
                             "cannot finish by the deadline with the whole band")
        rate_full = n_bits / airtime_s if airtime_s > 0 else math.inf
        done = self.env.event()
        if rate_full == math.inf or n_bits <= 0:
            return done.succeed(True)
        self._settle()
        cell = self._cells.setdefault(self.split.cell(client), {})
        cell[client] = _Upload(client, float(n_bits), rate_full, done)
        self._reschedule()
        return done

    def leave(self, client: int) -> bool:
        """An interrupted upload frees its share; it never contended, so False."""
        cell = self._cells.get(self.split.cell(client), {})
        if client in cell:
            self._settle()
            del cell[client]
            self._reschedule()
        return False

    # ---- the band's events

    def _settle(self) -> None:
        """Take the bits sent since the last change off every active upload."""
        now = float(self.env.now)
        dt = now - self._t_s
        if dt > 0:
            for cell in self._cells.values():
                for up in cell.values():
                    up.left_bits -= up.rate_bps * dt
                self.split.served(cell.values(), dt)
        self._t_s = now

    def _reschedule(self) -> None:
        """New rates for every cell, and one event at the next finish."""
        self._generation += 1
        next_s = math.inf
        for cell in self._cells.values():
            if not cell:
                continue
            ups = list(cell.values())
            for up, rate in zip(ups, self.split.rates_bps(ups)):
                up.rate_bps = float(rate)
                if rate > 0:
                    next_s = min(next_s, up.left_bits / rate)
        if next_s < math.inf:
            generation = self._generation
            self.env.timeout(max(next_s, 0.0)).callbacks.append(
                lambda _event: self._finish(generation))

    def _finish(self, generation: int) -> None:
        if generation != self._generation:
            return  # a later change rescheduled the band
        self._settle()
        for cell in self._cells.values():
            for client in [c for c, up in cell.items()
                           if up.left_bits <= DONE_BITS or
                           (up.rate_bps > 0 and up.left_bits / up.rate_bps <= 1e-12)]:
                cell.pop(client).done.succeed(True)
        self._reschedule()
