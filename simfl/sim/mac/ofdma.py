"""A band shared by the active uploads of each cell, reallocated at every start and finish.

An upload attempt joins its cell's band with all its bits left (:meth:`OfdmaAccess.serve`
returns the event that fires once they are served). At every join, finish and leave the
band settles the bits each active upload sent at its rate since the last change, asks
the scheduler for a new split (:mod:`simfl.sim.mac.band_split`) and schedules the one
next finish: a true discrete-event simulation, with no time steps. A newer schedule makes
the older finish events stale (they are ignored when they fire). Each cell keeps its
uploads in arrays (client, bits left, link rate, rate now), so an event costs a few
vector operations over the active uploads.

With a radio map, client k's rate on ``b`` Hz is ``b log2(1 + a_k / b)`` with
``a_k = P_k g_k / N0`` (mean received power; no fast fading: the link still decides
whether the attempt is lost). Without one there is one cell whose capacity is the
uplink's rate: client k's rate on a fraction f of the band is f times its attempt's link
rate (bits / airtime). With ``downlink = "shared"`` a second band of the same kind carries
the unicast downloads (:mod:`simfl.sim.mac.shared_downlink`). With ``interference =
"average"`` the uploads of the other cells raise each cell's noise floor
(:mod:`simfl.sim.mac.interference`), so every start and finish recomputes every cell.
With ``selectivity`` set the band is scheduled per TTI and resource block instead
(:mod:`simfl.sim.mac.tti_band`): the same arrays, but one event per TTI.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import simpy

from simfl.core.config.mac import PROCESS
from simfl.core.config.network import OfdmaMac
from simfl.core.records import EventKind
from simfl.core.registry import implements
from simfl.sim.links.channel import Bursts
from simfl.sim.mac.access import MacBase, radio_at_end
from simfl.sim.mac.protocol import LOST_ON_LINK, Transmission, Uplink
from simfl.sim.mac.band_split import BandSplit, build_band_split
from simfl.sim.mac.interference import CellInterference
from simfl.sim.mac.shared_downlink import DownlinkSplit
from simfl.sim.mac.tti_band import TtiBand
from simfl.sim.radio.capture import Air
from simfl.sim.radio.radio_map import RadioMap

#: an upload counts as served when its bits left would take under this long
DONE_S = 1e-9


class _Cell:
    """The uploads in one cell's band, by client id: bits left, link rate, rate now."""

    def __init__(self) -> None:
        self.clients = np.empty(0, dtype=np.int64)
        self.left_bits = np.empty(0)
        self.link_bps = np.empty(0)
        self.rate_bps = np.empty(0)
        self.done: dict[int, simpy.Event] = {}

    def join(self, client: int, bits: float, link_bps: float, done: simpy.Event) -> None:
        at = int(np.searchsorted(self.clients, client))
        self.clients = np.insert(self.clients, at, client)
        self.left_bits = np.insert(self.left_bits, at, bits)
        self.link_bps = np.insert(self.link_bps, at, link_bps)
        self.rate_bps = np.insert(self.rate_bps, at, 0.0)
        self.done[client] = done

    def drop(self, gone: np.ndarray) -> list[simpy.Event]:
        """Take the uploads at the mask ``gone`` out; their events, in client order."""
        events = [self.done.pop(int(c)) for c in self.clients[gone]]
        keep = ~gone
        self.clients, self.left_bits = self.clients[keep], self.left_bits[keep]
        self.link_bps, self.rate_bps = self.link_bps[keep], self.rate_bps[keep]
        return events


class OfdmaAccess(MacBase):
    """Uploads share their cell's band under ``cfg.scheduler`` (see
    :class:`~simfl.core.config.network.OfdmaMac`)."""

    cfg: OfdmaMac
    radio: RadioMap | None = None
    split: BandSplit | None = None
    downloads: OfdmaAccess | None = None  # the downlink's band (``downlink = "shared"``)
    interference: CellInterference | None = None  # ``interference = "average"``
    tti: TtiBand | None = None  # ``selectivity``: the band per TTI and block
    _generation = 0
    _cells: dict[int, _Cell] = {}  # replaced by each round's own (never mutated here)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # placed rounds run off the clock (this band on the loop's heap) with the equal
        # split in each cell on its own; other schedulers, interference and a band
        # scheduled per TTI keep the clock
        if (self.cfg.scheduler != "equal" or self.cfg.interference != "none"
                or self.cfg.selectivity is not None):
            self.capabilities = dataclasses.replace(self.capabilities,
                                                    placed_engines=frozenset({PROCESS}))

    def attach(self, air: Air) -> None:
        self.radio = air.radio_map
        if self.cfg.interference == "average":
            assert self.radio is not None, "interference needs network.radio"
            self.interference = CellInterference(self.radio, self.cfg.reuse)

    def open_round(self, round: int, started: np.ndarray) -> None:
        self._round, self._started = round, started
        self._cells = {}
        self._t_s = float(self.env.now)
        self._generation += 1
        if self.split is None:  # one scheduler for the run (PF keeps averages)
            self.split = build_band_split(self.cfg, self.radio, self.n_clients)
        self.split.new_round()
        if self.interference is not None:
            self.interference.new_round()
        if self.cfg.selectivity is not None:
            if self.tti is None:  # one for the run (its fading gains have memory)
                self.tti = TtiBand(self.cfg, self.split, self.env, self.rngs, self.n_clients,
                                   self.interference)
            self.tti.open_round()
        if self.cfg.downlink == "shared":
            if self.downloads is None:  # the downlink's band, split equally
                cfg = dataclasses.replace(self.cfg, scheduler="equal", downlink="private",
                                          interference="none", reuse=1, selectivity=None)
                self.downloads = OfdmaAccess(cfg, self.env, self.rngs, self.n_clients)
                self.downloads.split = DownlinkSplit(cfg, self.radio, self.n_clients)
            self.downloads.open_round(round, started)

    def close_round(self) -> None:
        self._cells = {}
        self._generation += 1  # finish events still due are stale
        if self.tti is not None:
            self.tti.close_round()
        if self.downloads is not None:
            self.downloads.close_round()
        return None

    def transmit(self, client: int, uplink: Uplink) -> Transmission:
        """No contention: each attempt joins the band and lasts until it is served."""
        if not (yield from uplink.send(self.share, self.serve)):
            return LOST_ON_LINK
        return None

    def share(self, client: int, t_s: float, airtime_s: float) -> tuple[float, Bursts]:
        """The radio's bursts as charged when an attempt starts: its airtime (the rest of
        the time it holds a share is charged when it is served)."""
        return airtime_s, radio_at_end(airtime_s, airtime_s)

    def serve_download(self, client: int, n_bits: float, airtime_s: float
                       ) -> simpy.Event | None:
        """With a shared downlink, the event that fires once the access point's band has
        served ``client``'s download attempt (:mod:`simfl.sim.mac.shared_downlink`)."""
        if self.downloads is None:
            return None
        return self.downloads.serve(client, n_bits, airtime_s)

    def serve(self, client: int, n_bits: float, airtime_s: float) -> simpy.Event:
        """The event that fires once ``n_bits`` of ``client``'s attempt (of ``airtime_s``
        on its own link) are served by the band."""
        split = self.split
        assert split is not None, "open_round comes first"
        if split.needs_plan:
            for other in split.plan(self._started, n_bits, self.deadline_s):
                if self.log is not None:
                    self.log(self.env.now, EventKind.BAND_REFUSED, self._round, other,
                             "cannot finish by the deadline with the whole band")
        done = self.env.event()
        if airtime_s <= 0 or n_bits <= 0:
            return done.succeed(True)
        if self.tti is not None:
            self.tti.join(split.cell(client), client, float(n_bits), done)
            return done
        self._settle()
        cell = split.cell(client)
        self._cells.setdefault(cell, _Cell()).join(client, float(n_bits), n_bits / airtime_s,
                                                   done)
        self._reschedule(cell)
        # the device's meter stays in transmit from the attempt's start until it is
        # served: the whole time it holds a share is charged there, once
        return done

    def leave(self, client: int) -> bool:
        """An interrupted upload (or download) frees its share; it never contended, so
        False."""
        if self.downloads is not None:
            self.downloads.leave(client)
        key = 0 if self.split is None else self.split.cell(client)
        if self.tti is not None:
            self.tti.leave(key, client)
            return False
        cell = self._cells.get(key)
        if cell is not None and client in cell.done:
            self._settle()
            cell.drop(cell.clients == client)
            self._reschedule(key)
        return False

    # ---- the band's events

    def _settle(self) -> None:
        """Take the bits sent since the last change off every active upload."""
        now = float(self.env.now)
        dt = now - self._t_s
        if dt > 0:
            assert self.split is not None
            for cell in self._cells.values():
                cell.left_bits -= cell.rate_bps * dt
                self.split.served(cell.clients, cell.rate_bps, dt)
        self._t_s = now

    def _reschedule(self, *changed: int) -> None:
        """New rates in the ``changed`` cells, and one event at the band's next finish."""
        assert self.split is not None
        self._generation += 1
        if self.interference is not None:  # every cell hears the others: all change
            changed = tuple(self._cells)
            self._raise_noise()
        for key in changed:
            cell = self._cells[key]
            if cell.clients.size:
                cell.rate_bps = self.split.rates_bps(cell.clients, cell.link_bps)
        next_s = math.inf
        for cell in self._cells.values():
            moving = cell.rate_bps > 0
            if moving.any():
                next_s = min(next_s, float(np.min(cell.left_bits[moving]
                                                  / cell.rate_bps[moving])))
        if next_s < math.inf:
            generation = self._generation
            self.env.timeout(max(next_s, 0.0)).callbacks.append(
                lambda _event: self._finish(generation))

    def _raise_noise(self) -> None:
        """Each active upload's noise rise from the uploads active in the other cells."""
        assert self.split is not None and self.interference is not None
        split = self.split
        if split.rise is None:
            split.rise = np.ones(self.n_clients)
        rises = self.interference.rises({key: cell.clients for key, cell in self._cells.items()},
                                        split.a_hz, split.band_hz)
        for key, rise in rises.items():
            split.rise[self._cells[key].clients] = rise

    def _finish(self, generation: int) -> None:
        if generation != self._generation:
            return  # a later change rescheduled the band
        self._settle()
        changed = []
        for key, cell in self._cells.items():
            gone = cell.left_bits <= cell.rate_bps * DONE_S
            if gone.any():
                changed.append(key)
                for event in cell.drop(gone):
                    event.succeed(True)
        self._reschedule(*changed)


implements(OfdmaMac, OfdmaAccess)  # the kind's access model (simfl.sim.mac.kinds builds it)
