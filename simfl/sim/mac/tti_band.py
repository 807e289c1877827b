"""The shared band with frequency-selective fading, scheduled TTI by TTI.

With ``network.mac.selectivity`` set, every resource block of a cell's band fades on its
own (:mod:`simfl.sim.radio.block_gains`) and the band is shared on a grid of scheduling
intervals (TTIs) of ``tti_s`` seconds from t = 0. At the start of each TTI in which a
cell has active uploads, one vectorised step over its uploads x blocks draws the gains,
computes each upload's rate on each block, and lets the scheduler give every block to
one upload (:meth:`~simfl.sim.mac.band_split.BandSplit.block_owners`).

Rates: a block of ``b = B / R`` Hz carries ``b log2(1 + g a_k / B)`` bit/s for client k,
``a_k = P_k g_k / N0`` (divided by the noise rise under interference), ``g`` the block's
fading gain: the client transmits at a fixed power spectral density ``P_k / B``, so its
per-block SNR is its full-band mean SNR times the block's gain (a client on m blocks
radiates m/R of its power). An upload's rate in a TTI is the sum over its blocks; its
bits left fall by that rate times the TTI, and an upload whose bits run out inside a TTI
is served at the instant they do, ``t + bits left / rate`` (its blocks stay unused for
the rest of that TTI). An upload that joins during a TTI waits for the next one; one
that leaves during a TTI leaves its blocks unused until the next. One event per TTI
while any cell has an active upload (and one per finish): the clock jumps over the
time when nobody uploads.

Counters per client (explicit state for tests and studies): ``block_ttis``, the block-TTIs
it was given, and ``granted_bits``, the bits those blocks could carry.
"""

from __future__ import annotations

import numpy as np
import simpy

from simfl.core.config.network import OfdmaMac
from simfl.core.rng import RngTree
from simfl.sim.mac.access import first_slot
from simfl.sim.mac.band_split import BandSplit
from simfl.sim.mac.interference import CellInterference
from simfl.sim.radio.block_gains import BlockGains

#: an upload counts as served when its bits left would take under this long
DONE_S = 1e-9


class _Uploads:
    """The uploads in one cell's band, by client id: bits left, rate in this TTI."""

    def __init__(self) -> None:
        self.clients = np.empty(0, dtype=np.int64)
        self.left_bits = np.empty(0)
        self.rate_bps = np.empty(0)
        self.done: dict[int, simpy.Event] = {}

    def join(self, client: int, bits: float, done: simpy.Event) -> None:
        at = int(np.searchsorted(self.clients, client))
        self.clients = np.insert(self.clients, at, client)
        self.left_bits = np.insert(self.left_bits, at, bits)
        self.rate_bps = np.insert(self.rate_bps, at, 0.0)  # until the next TTI
        self.done[client] = done

    def drop(self, gone: np.ndarray) -> list[simpy.Event]:
        """Take the uploads at the mask ``gone`` out; their events, in client order."""
        events = [self.done.pop(int(c)) for c in self.clients[gone]]
        keep = ~gone
        self.clients, self.left_bits = self.clients[keep], self.left_bits[keep]
        self.rate_bps = self.rate_bps[keep]
        return events


class TtiBand:
    """Each cell's uploads, scheduled per TTI and block (module docstring).

    Parameters
    ----------
    cfg:
        The MAC's config (``selectivity`` set, ``resource_blocks`` > 0).
    split:
        The scheduler (it keeps proportional fair's averages across rounds).
    env, rngs, n_clients:
        The clock, the run's random streams, how many clients there are.
    interference:
        The noise rise between cells (``interference = "average"``), or None.
    """

    def __init__(self, cfg: OfdmaMac, split: BandSplit, env: simpy.Environment,
                 rngs: RngTree, n_clients: int,
                 interference: CellInterference | None = None) -> None:
        assert cfg.selectivity is not None and cfg.resource_blocks
        self.cfg, self.split, self.env = cfg, split, env
        self.blocks, self.tti_s = int(cfg.resource_blocks), float(cfg.tti_s)
        self.interference = interference
        self.gains = BlockGains(cfg.selectivity, self.blocks, cfg.coherence_blocks,
                                self.tti_s, rngs, n_clients)
        self.block_ttis = np.zeros(n_clients, dtype=np.int64)
        self.granted_bits = np.zeros(n_clients)
        self.n_ttis = 0  # TTIs scheduled (events), for the cost of the model
        self._cells: dict[int, _Uploads] = {}
        self._ticking = False
        self._generation = 0  # a closed round makes its pending events stale
        self._t_s = 0.0  # when the rates in force began

    def open_round(self) -> None:
        self._cells = {}
        self._ticking = False
        self._generation += 1

    close_round = open_round

    def join(self, cell: int, client: int, n_bits: float, done: simpy.Event) -> None:
        """``client``'s upload of ``n_bits`` joins ``cell``'s band; ``done`` fires once
        it is served."""
        self._cells.setdefault(cell, _Uploads()).join(client, n_bits, done)
        if not self._ticking:
            self._ticking = True
            tti = first_slot(float(self.env.now), self.tti_s)
            self._at(tti * self.tti_s, lambda generation: self._tick(generation, tti))

    def leave(self, cell: int, client: int) -> None:
        """An interrupted upload leaves; its blocks stay unused until the next TTI."""
        uploads = self._cells.get(cell)
        if uploads is not None and client in uploads.done:
            uploads.drop(uploads.clients == client)

    # ---- the band's events

    def _at(self, t_s: float, act: object) -> None:
        generation = self._generation
        self.env.timeout(max(t_s - float(self.env.now), 0.0)).callbacks.append(
            lambda _event: act(generation))  # type: ignore[operator]

    def _settle(self) -> None:
        now = float(self.env.now)
        dt = now - self._t_s
        if dt > 0:
            for uploads in self._cells.values():
                uploads.left_bits -= uploads.rate_bps * dt
        self._t_s = now

    def _tick(self, generation: int, tti: int) -> None:
        if generation != self._generation:
            return
        self._settle()
        for uploads in self._cells.values():  # any still due at the boundary (rounding)
            gone = uploads.left_bits <= uploads.rate_bps * DONE_S
            for event in uploads.drop(gone):
                event.succeed(True)
        if not any(u.clients.size for u in self._cells.values()):
            self._ticking = False
            return
        self.n_ttis += 1
        if self.interference is not None:
            self._raise_noise()
        for key in sorted(self._cells):
            uploads = self._cells[key]
            if uploads.clients.size:
                self._schedule(key, uploads, tti)
        self._at((tti + 1) * self.tti_s, lambda g: self._tick(g, tti + 1))

    def _schedule(self, key: int, uploads: _Uploads, tti: int) -> None:
        """One TTI of one cell: gains, rates per block, owners, rates and finishes."""
        split, clients = self.split, uploads.clients
        block_hz = split.band_hz / self.blocks
        snr = split.sinr_hz(clients) / split.band_hz  # full-band mean SNR
        block_bps = block_hz * np.log2(1.0 + snr[:, None] * self.gains.gains(clients, tti))
        owners = split.block_owners(key, clients, block_bps)
        held = owners >= 0
        rows = owners[held]
        rate = np.bincount(rows, weights=block_bps[rows, np.flatnonzero(held)],
                           minlength=clients.size).astype(float)
        uploads.rate_bps = rate
        self.block_ttis[clients] += np.bincount(rows, minlength=clients.size)
        self.granted_bits[clients] += rate * self.tti_s
        split.served(clients, rate, self.tti_s)
        ending = (rate > 0) & (uploads.left_bits <= rate * self.tti_s)
        for client, left, r in zip(clients[ending], uploads.left_bits[ending], rate[ending]):
            self._at(float(self.env.now) + float(left / r),
                     lambda g, c=int(client), k=key: self._finish(g, k, c))

    def _finish(self, generation: int, key: int, client: int) -> None:
        """``client``'s bits ran out inside the TTI: it is served now."""
        uploads = self._cells.get(key)
        if generation != self._generation or uploads is None or client not in uploads.done:
            return  # a closed round, or it left (or was served at a boundary) already
        self._settle()
        for event in uploads.drop(uploads.clients == client):
            event.succeed(True)

    def _raise_noise(self) -> None:
        """Each active upload's noise rise from the uploads active in the other cells."""
        split, interference = self.split, self.interference
        assert interference is not None and split.radio is not None
        if split.rise is None:
            split.rise = np.ones(split.radio.n_clients)
        rises = interference.rises({key: u.clients for key, u in self._cells.items()},
                                   split.a_hz, split.band_hz)
        for key, rise in rises.items():
            split.rise[self._cells[key].clients] = rise

