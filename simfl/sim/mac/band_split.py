"""How a cell's band is split among its active uploads, scheduler by scheduler.

Splits are fractions of the band, one per active upload (in client-id order for ties
and rotations), summing to at most 1; with ``resource_blocks`` they are whole blocks.
``equal``: 1/n each (with blocks: whole blocks by the largest remainder, ties to the lower
id, so with more uploads than blocks some wait). ``round_robin``: the blocks are dealt
to the uploads in turn, TTI after TTI, in its fluid limit: with n uploads and R blocks
each holds ceil(R/n) blocks in a fraction (R mod n)/n of the time and floor(R/n) in the
rest (none: it waits), at the rate of what it holds, so every upload gets an equal time
share of the blocks (continuous: 1/n of the band all the time).
``max_rate``: the whole band to the client with the highest full-band rate.
``proportional_fair``: shares in proportion to full-band rate over average throughput
(exponentially averaged with ``pf_time_constant_s`` while the client is in the band).
``min_latency``: fractions fixed when the round's first upload joins (see :meth:`plan`).

With ``selectivity`` (per-block fading, :mod:`simfl.sim.mac.tti_band`) the split is made
per TTI and block instead (:meth:`BandSplit.block_owners`): ``max_rate`` gives each
block to the upload with the best rate on it, ``proportional_fair`` to the best rate on
it over the upload's average throughput, ``round_robin`` deals the blocks in turn
(continuing from the previous TTI's last), and ``equal`` (or a scheduler of one's own, or
a round policy's shares) gives each upload its whole blocks of :meth:`shares` as
adjacent runs in client order.

Every built-in scheduler kind (:mod:`simfl.core.config.scheduler`) is implemented by
:class:`BandSplit`; a scheduler of one's own subclasses it and overrides
:meth:`BandSplit.fractions` (the other methods then serve it as they serve ``equal``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from simfl.core.config.network import OfdmaMac
from simfl.core.config.scheduler import (EqualShare, MaxRate, MinLatency, ProportionalFair,
                                         RoundRobin, scheduler_named)
from simfl.core.errors import ConfigError
from simfl.core.registry import implementation_of, implements
from simfl.sim.radio.band import min_latency_split, whole_blocks
from simfl.sim.radio.radio_map import RadioMap


def build_band_split(cfg: OfdmaMac, radio: RadioMap | None, n_clients: int) -> BandSplit:
    """The band split of ``cfg.scheduler``: its implementation, built as
    ``cls(cfg, radio, n_clients)`` (a :class:`BandSplit` or one of its subclasses)."""
    split: BandSplit = implementation_of(scheduler_named(cfg.scheduler),
                                         "network.mac.scheduler")(cfg, radio, n_clients)
    return split


class BandSplit:
    """The scheduler of ``cfg`` for ``n_clients`` over the cells of ``radio`` (one cell
    without a radio). Uploads are given as arrays: their clients (sorted ids) and each
    one's link rate over the whole band without a radio (``link_bps``)."""

    def __init__(self, cfg: OfdmaMac, radio: RadioMap | None, n_clients: int) -> None:
        self.cfg, self.radio = cfg, radio
        self.blocks = cfg.resource_blocks or 0
        self.avg_bps = np.full(n_clients, np.nan)  # proportional fair's averages
        self.rr_turn: dict[int, int] = {}  # round robin per TTI: each cell's next turn
        self.fixed = np.zeros(n_clients)  # min latency's (or a policy's) fractions, this round
        self.needs_plan = False
        self.assigned = False  # a round policy fixed this round's fractions
        self._base_a_hz: np.ndarray | None = None  # received powers before a policy's
        self.rise: np.ndarray | None = None  # 1 + I/N0 of each client's cell (interference)
        if radio is not None:
            self.band_hz = float(radio.bandwidth_hz)
            self.a_hz = np.asarray(radio.rx_power_w(), dtype=float) / (radio.noise_w
                                                                       / self.band_hz)
            if cfg.reuse != 1:  # each cell has its third of the band
                self.band_hz /= cfg.reuse

    def new_round(self) -> None:
        self.needs_plan = self.cfg.scheduler == "min_latency"
        self.fixed[:] = 0.0
        self.assigned = False
        if self._base_a_hz is not None:
            self.a_hz, self._base_a_hz = self._base_a_hz, None

    def assign(self, shares: dict[int, float] | None, a_hz: dict[int, float]) -> None:
        """A round policy's decisions for this round: each client's fixed fraction of
        its cell's band (None: the scheduler's), and the received power over the noise
        density of the clients whose transmit power it set (:mod:`simfl.sim.rounds.resources`)."""
        if shares is not None:
            self.needs_plan, self.assigned = False, True
            for client, share in shares.items():
                self.fixed[client] = share
        if a_hz and self.radio is not None:
            self._base_a_hz = self.a_hz.copy()
            for client, a in a_hz.items():
                self.a_hz[client] = a

    def cell(self, client: int) -> int:
        return 0 if self.radio is None else int(self.radio.ap[client])

    def full_rate_bps(self, clients: np.ndarray, link_bps: np.ndarray) -> np.ndarray:
        """Each upload's rate alone on the whole band."""
        if self.radio is None:
            return link_bps
        return np.asarray(self.band_hz * np.log2(1.0 + self.sinr_hz(clients) / self.band_hz))

    def rates_bps(self, clients: np.ndarray, link_bps: np.ndarray) -> np.ndarray:
        """Each upload's rate (bit/s) under the split."""
        if self.cfg.scheduler == "round_robin" and self.blocks and not self.assigned:
            n, blocks = clients.size, self.blocks
            high = (blocks % n) / n  # time share holding one block more
            return (high * self._on(clients, link_bps, np.full(n, (blocks // n + 1) / blocks))
                    + (1.0 - high) * self._on(clients, link_bps,
                                              np.full(n, (blocks // n) / blocks)))
        return self._on(clients, link_bps, self.shares(clients, link_bps))

    def shares(self, clients: np.ndarray, link_bps: np.ndarray) -> np.ndarray:
        """The fractions in force: a round policy's (:meth:`assign`), else the scheduler's
        (:meth:`fractions`; a scheduler of one's own is checked: n of them in [0, 1]
        summing to at most 1)."""
        if self.assigned:
            return np.asarray(self.fixed[clients])
        fractions = self.fractions(clients, link_bps)
        if type(self).fractions is BandSplit.fractions:
            return fractions
        return checked_split(self.cfg.scheduler, fractions, clients.size)

    def _on(self, clients: np.ndarray, link_bps: np.ndarray, fractions: np.ndarray
            ) -> np.ndarray:
        """Each upload's rate (bit/s) on its fraction of the band."""
        if self.radio is None:
            return np.asarray(fractions * link_bps)
        b = fractions * self.band_hz
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(b > 0, b * np.log2(1.0 + self.sinr_hz(clients) / b), 0.0)

    def sinr_hz(self, clients: np.ndarray) -> np.ndarray:
        """Received power over the noise and interference density (Hz): ``a_hz``, divided
        by the noise rise ``1 + I/N0`` of each client's cell when ``rise`` is set."""
        if self.rise is None:
            return np.asarray(self.a_hz[clients])
        return np.asarray(self.a_hz[clients] / self.rise[clients])

    def served(self, clients: np.ndarray, rates_bps: np.ndarray, dt_s: float) -> None:
        """``dt_s`` has passed at ``rates_bps`` (proportional fair's averages)."""
        if self.cfg.scheduler != "proportional_fair":
            return
        keep = math.exp(-dt_s / self.cfg.pf_time_constant_s)
        old = self.avg_bps[clients]
        self.avg_bps[clients] = np.where(np.isnan(old), rates_bps,
                                         keep * old + (1.0 - keep) * rates_bps)

    def block_owners(self, cell: int, clients: np.ndarray, block_bps: np.ndarray
                     ) -> np.ndarray:
        """Who gets each resource block in this TTI: for each block (column of
        ``block_bps``, the rates of ``clients``, one row each, on each block) the row
        of its upload, or -1 (unused)."""
        n, blocks = block_bps.shape
        kind = self.cfg.scheduler
        if not self.assigned and kind == "max_rate":
            return np.asarray(np.argmax(block_bps, axis=0))
        if not self.assigned and kind == "proportional_fair":
            avg = self.avg_bps[clients]
            fresh = np.isnan(avg)  # new in the band: its rate on an equal share
            avg[fresh] = block_bps[fresh].sum(axis=1) / n
            self.avg_bps[clients] = avg
            return np.asarray(np.argmax(block_bps / np.maximum(avg, 1e-300)[:, None], axis=0))
        if not self.assigned and kind == "round_robin":
            turn = self.rr_turn.get(cell, 0)
            self.rr_turn[cell] = (turn + blocks) % n
            return np.asarray((turn + np.arange(blocks)) % n)
        counts = np.rint(whole_blocks(self.shares(clients, block_bps.sum(axis=1)), blocks)
                         * blocks).astype(np.int64)
        owners = np.full(blocks, -1, dtype=np.int64)
        owners[:counts.sum()] = np.repeat(np.arange(n), counts)
        return owners

    def plan(self, started: np.ndarray, n_bits: float, deadline_s: float) -> list[int]:
        """Fix the min-latency split of the round's ``started`` clients, each with
        ``n_bits`` to send; returns those refused (they cannot finish within the deadline
        even with the whole band: ``S ln 2 / a >= deadline_s``; they get no band)."""
        self.needs_plan = False
        clients = np.asarray(started, dtype=np.int64)
        if self.radio is None:
            self.fixed[clients] = 1.0 / max(clients.size, 1)
            return []
        with np.errstate(divide="ignore"):
            t_min_s = n_bits * math.log(2.0) / self.a_hz[clients]
        kept = clients[t_min_s < deadline_s]
        cells = self.radio.ap[kept]
        for cell in np.unique(cells):
            members = kept[cells == cell]
            _, b_hz = min_latency_split(np.full(members.size, n_bits), self.a_hz[members],
                                        self.band_hz)
            self.fixed[members] = b_hz / self.band_hz
        return [int(c) for c in clients[~(t_min_s < deadline_s)]]

    def fractions(self, clients: np.ndarray, link_bps: np.ndarray) -> np.ndarray:
        """Fractions of the band of ``clients`` (sorted ids: ties go to the lower id),
        summing to at most 1: what a scheduler of one's own overrides."""
        n, kind, blocks = clients.size, self.cfg.scheduler, self.blocks
        if kind == "min_latency":
            return np.asarray(self.fixed[clients])
        if kind == "max_rate":
            out = np.zeros(n)
            out[int(np.argmax(self.full_rate_bps(clients, link_bps)))] = 1.0
            return out
        if kind == "proportional_fair":
            full = self.full_rate_bps(clients, link_bps)
            avg = self.avg_bps[clients]
            avg = np.where(np.isnan(avg), full / n, avg)
            weight = full / np.maximum(avg, 1e-300)
            share = weight / weight.sum() if weight.sum() > 0 else np.full(n, 1.0 / n)
            return whole_blocks(share, blocks) if blocks else share
        return whole_blocks(np.full(n, 1.0 / n), blocks) if blocks else np.full(n, 1.0 / n)


# the built-in schedulers are the branches of BandSplit (``simfl.register`` adds more)
for _scheduler in (EqualShare, RoundRobin, ProportionalFair, MaxRate, MinLatency):
    implements(_scheduler, BandSplit)


def checked_split(kind: str, fractions: Any, n: int) -> np.ndarray:
    """A plugged-in scheduler's fractions, refused in one line unless n of them in [0, 1]
    sum to at most 1."""
    out = np.asarray(fractions, dtype=float)
    if out.shape != (n,) or not np.all((out >= 0) & (out <= 1)) or out.sum() > 1 + 1e-9:
        raise ConfigError(f"network.mac.scheduler {kind}: fractions", out.tolist(),
                          f"{n} fractions of the band in [0, 1] summing to at most 1")
    return out
