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
"""

from __future__ import annotations

import math
from typing import Iterable, Protocol, Sequence

import numpy as np

from simfl.core.config.network import OfdmaMac
from simfl.sim.radio.band import min_latency_split, whole_blocks
from simfl.sim.radio.radio_map import RadioMap


class Active(Protocol):
    """What the split reads of an upload in the band."""

    client: int
    rate_full_bps: float
    rate_bps: float


class BandSplit:
    """The scheduler of ``cfg`` over the cells of ``radio`` (one cell without a radio)."""

    def __init__(self, cfg: OfdmaMac, radio: RadioMap | None) -> None:
        self.cfg, self.radio = cfg, radio
        self.blocks = cfg.resource_blocks or 0
        self.avg_bps: dict[int, float] = {}  # proportional fair's averaged throughputs
        self._fixed: dict[int, float] = {}
        self.needs_plan = False
        if radio is not None:
            self.band_hz = float(radio.bandwidth_hz)
            self.a_hz = np.asarray(radio.rx_power_w(), dtype=float) / (radio.noise_w
                                                                       / self.band_hz)

    def new_round(self) -> None:
        self.needs_plan = self.cfg.scheduler == "min_latency"
        self._fixed = {}

    def cell(self, client: int) -> int:
        return 0 if self.radio is None else int(self.radio.ap[client])

    def full_rate_bps(self, up: Active) -> float:
        if self.radio is None:
            return up.rate_full_bps
        a = float(self.a_hz[up.client])
        return self.band_hz * math.log2(1.0 + a / self.band_hz)

    def rates_bps(self, ups: Sequence[Active]) -> np.ndarray:
        """Each upload's rate (bit/s) under the split, in the order of ``ups``."""
        if self.cfg.scheduler == "round_robin" and self.blocks:
            n, blocks = len(ups), self.blocks
            high = (blocks % n) / n  # time share holding one block more
            return (high * self._on(ups, np.full(n, (blocks // n + 1) / blocks))
                    + (1.0 - high) * self._on(ups, np.full(n, (blocks // n) / blocks)))
        order = np.argsort([up.client for up in ups], kind="stable")
        ranked = [ups[i] for i in order]
        fractions = np.empty(len(ups))
        fractions[order] = self._fractions(ranked)
        return self._on(ups, fractions)

    def _on(self, ups: Sequence[Active], fractions: np.ndarray) -> np.ndarray:
        """Each upload's rate (bit/s) on its fraction of the band."""
        if self.radio is None:
            return np.asarray(fractions * np.array([up.rate_full_bps for up in ups]))
        b = fractions * self.band_hz
        a = self.a_hz[[up.client for up in ups]]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(b > 0, b * np.log2(1.0 + a / b), 0.0)

    def served(self, ups: Iterable[Active], dt_s: float) -> None:
        """``dt_s`` has passed at the current rates (proportional fair's averages)."""
        if self.cfg.scheduler != "proportional_fair":
            return
        keep = math.exp(-dt_s / self.cfg.pf_time_constant_s)
        for up in ups:
            old = self.avg_bps.get(up.client, up.rate_bps)
            self.avg_bps[up.client] = keep * old + (1.0 - keep) * up.rate_bps

    def plan(self, started: np.ndarray, n_bits: float, deadline_s: float) -> list[int]:
        """Fix the min-latency split of the round's ``started`` clients, each with
        ``n_bits`` to send; returns those refused (they cannot finish within the deadline
        even with the whole band: ``S ln 2 / a >= deadline_s``; they get no band)."""
        self.needs_plan = False
        clients = np.asarray(started, dtype=np.int64)
        if self.radio is None:
            self._fixed = {int(c): 1.0 / max(len(clients), 1) for c in clients}
            return []
        a = self.a_hz[clients]
        with np.errstate(divide="ignore"):
            t_min_s = n_bits * math.log(2.0) / a
        refused = clients[~(t_min_s < deadline_s)]
        kept = clients[t_min_s < deadline_s]
        cells = self.radio.ap[kept]
        for cell in np.unique(cells):
            members = kept[cells == cell]
            _, b_hz = min_latency_split(np.full(len(members), n_bits), self.a_hz[members],
                                        self.band_hz)
            self._fixed.update(zip(members.tolist(), (b_hz / self.band_hz).tolist()))
        return [int(c) for c in refused]

    def _fractions(self, ups: Sequence[Active]) -> np.ndarray:
        n, kind, blocks = len(ups), self.cfg.scheduler, self.blocks
        if kind == "min_latency":
            return np.array([self._fixed.get(up.client, 0.0) for up in ups])
        if kind == "max_rate":
            full = np.array([self.full_rate_bps(up) for up in ups])
            out = np.zeros(n)
            out[int(np.argmax(full))] = 1.0
            return out
        if kind == "proportional_fair":
            full = np.array([self.full_rate_bps(up) for up in ups])
            avg = np.array([self.avg_bps.get(up.client, f / n) for up, f in zip(ups, full)])
            weight = full / np.maximum(avg, 1e-300)
            share = weight / weight.sum() if weight.sum() > 0 else np.full(n, 1.0 / n)
            return whole_blocks(share, blocks) if blocks else share
        return whole_blocks(np.full(n, 1.0 / n), blocks) if blocks else np.full(n, 1.0 / n)
