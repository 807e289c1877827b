"""A round's radio resources as a policy decides them (``server.policy``).

When a round opens, :class:`RoundResources` shows the policy the sampler's candidates
(:class:`~simfl.core.round_policy.RoundState`), checks its
:class:`~simfl.core.round_policy.Allocation` and runs it for that round only:

* the selection: the candidates it leaves out are not invited;
* band shares: each selected client holds its fraction of its cell's band for the whole
  round, whenever it uploads (the OFDMA MAC's split is fixed for the round);
* transmit powers: the radio map's power of the client for the round (every link,
  the band and capture read it there); at the close each goes back to what it was;
* CPU clocks (DVFS): the round's compute time becomes ``c D / f`` and the computing
  power ``kappa f^3``.

What the state estimates: downloads and uploads at the link's nominal full-band rate
(mean SNR, no fading, no losses), computing at the client's own clock; batteries as of
each device's last change of state.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from simfl.core.config.network import IdealChannel
from simfl.core.records import RoundOutcome
from simfl.core.round_policy import (Allocation, Dvfs, RadioState, RoundPolicy, RoundState,
                                     check_allocation)
from simfl.sim.links.channel import Link
from simfl.sim.mac.band_split import BandSplit
from simfl.sim.mac.protocol import MediumAccess
from simfl.sim.radio.broadcast import Broadcast
from simfl.sim.radio.link import RadioLink
from simfl.sim.radio.radio_map import RadioMap
from simfl.sim.rounds.device import Devices


class ClockedTimes:
    """Compute times with some clients' replaced for a round (``times``: client -> s)."""

    def __init__(self, base: Any, times: dict[int, float]) -> None:
        self.base, self.times = base, times

    def __getitem__(self, clients: Any) -> Any:
        out = self.base[clients]
        if np.ndim(out) == 0:
            return self.times.get(int(clients), out)
        out = np.array(out, dtype=float)
        for i, client in enumerate(np.asarray(clients).tolist()):
            if client in self.times:
                out[i] = self.times[client]
        return out


class RoundResources:
    """Asks ``policy`` for each round's allocation and runs it on ``devices``.

    Parameters
    ----------
    max_tx_power_dbm:
        Each client's power cap (``network.radio.tx_power_dbm``; None without a radio).
    dvfs:
        The population's CPUs (all clients) when it sets a clock; None otherwise.
    """

    def __init__(self, policy: RoundPolicy, devices: Devices, n_clients: int, *,
                 radio_map: RadioMap | None = None,
                 max_tx_power_dbm: np.ndarray | None = None, dvfs: Dvfs | None = None,
                 broadcast: Broadcast | None = None) -> None:
        self.policy, self.devices, self.radio_map = policy, devices, radio_map
        self.max_tx_power_dbm, self.dvfs, self.broadcast = max_tx_power_dbm, dvfs, broadcast
        self.last_round = np.full(n_clients, -1, dtype=np.int64)
        self.allocation: Allocation | None = None
        self._undo: list[Any] = []

    def decide(self, round: int, t_s: float, deadline_s: float, chosen: np.ndarray
               ) -> np.ndarray:
        """The policy's selection among ``chosen`` (repeats kept); its clocks take effect
        now, its powers and shares when the round opens (:meth:`open`)."""
        state = self.state(round, t_s, deadline_s, np.unique(chosen))
        allocation = self.policy.decide(state)
        check_allocation(state, allocation)
        self.allocation = allocation
        self._set_clocks(allocation)
        keep = np.isin(chosen, np.asarray(list(allocation.selected), dtype=np.int64))
        return np.asarray(chosen[keep], dtype=np.int64)

    def open(self, mac: MediumAccess) -> None:
        """Set the round's powers and band shares (after the MAC opened the round; a MAC
        that shares a band keeps its split as ``split``)."""
        allocation = self.allocation
        if allocation is None:
            return
        self._set_powers(allocation)
        split = getattr(mac, "split", None)
        if isinstance(split, BandSplit) and (
                allocation.share or allocation.resource_blocks or allocation.tx_power_dbm):
            shares = (allocation.shares(split.cfg.resource_blocks or 1)
                      if allocation.share or allocation.resource_blocks else None)
            m = self.radio_map
            a_hz = {} if m is None else {
                int(c): float(m.rx_power_w(int(c))) / (m.noise_w / float(m.bandwidth_hz))
                for c in allocation.tx_power_dbm}
            split.assign(shares, a_hz)

    def close(self, outcome: RoundOutcome) -> None:
        """The round closed: undo its powers and clocks, note who took part."""
        for undo in reversed(self._undo):
            undo()
        self._undo, self.allocation = [], None
        for arrival in outcome.received:
            self.last_round[arrival.client] = outcome.round

    # ---- the state the policy sees

    def state(self, round: int, t_s: float, deadline_s: float, clients: np.ndarray
              ) -> RoundState:
        d = self.devices
        energy = d.energy
        stored = getattr(energy, "stored_j", None)
        mac = d.mac
        return RoundState(
            round=round, t_s=t_s, deadline_s=deadline_s, clients=clients,
            n_samples=np.asarray(d.n_samples[clients]),
            compute_s=np.asarray(d.compute_s[clients], dtype=float),
            download_s=self._download_s(clients), uplink_bps=self._uplink_bps(clients),
            upload_bits=8.0 * d.upload_bytes, tx_w=energy.power.contention_w(),
            battery_j=(np.full(clients.size, math.inf) if stored is None
                       else np.asarray(stored[clients], dtype=float)),
            energy_used_j=np.asarray(energy.used_j[clients], dtype=float),
            last_round=self.last_round[clients].copy(),
            ofdma=hasattr(mac, "split"),  # a MAC that splits a band among the uploads
            resource_blocks=getattr(getattr(mac, "cfg", None), "resource_blocks", None) or 0,
            radio=self._radio(clients),
            dvfs=None if self.dvfs is None else Dvfs(
                self.dvfs.max_cpu_hz[clients], self.dvfs.work_samples[clients],
                self.dvfs.cycles_per_sample, self.dvfs.kappa))

    def _radio(self, clients: np.ndarray) -> RadioState | None:
        m = self.radio_map
        if m is None:
            return None
        assert self.max_tx_power_dbm is not None, "a radio comes with its power caps"
        return RadioState(m.x_m[clients].copy(), m.y_m[clients].copy(), m.ap[clients].copy(),
                          m.gain_db[clients].copy(), m.tx_power_dbm[clients].copy(),
                          self.max_tx_power_dbm[clients].copy(), m.mean_snr_db(clients),
                          float(m.bandwidth_hz), m.noise_w / float(m.bandwidth_hz))

    def _download_s(self, clients: np.ndarray) -> np.ndarray:
        bits = 8.0 * self.devices.model_bytes
        if self.broadcast is not None:
            return np.full(clients.size, self.broadcast.duration_s(clients))
        return np.asarray(bits / _nominal_bps(self.devices.links.downlink, clients))

    def _uplink_bps(self, clients: np.ndarray) -> np.ndarray:
        return _nominal_bps(self.devices.links.uplink, clients)

    # ---- running the decisions

    def _set_powers(self, allocation: Allocation) -> None:
        m = self.radio_map
        if not allocation.tx_power_dbm or m is None:
            return
        clients = np.asarray([int(c) for c in allocation.tx_power_dbm], dtype=np.int64)
        before = m.tx_power_dbm[clients].copy()
        m.tx_power_dbm[clients] = np.asarray([float(p) for p in allocation.tx_power_dbm.values()])

        def restore() -> None:
            m.tx_power_dbm[clients] = before
        self._undo.append(restore)

    def _set_clocks(self, allocation: Allocation) -> None:
        dvfs = self.dvfs
        if not allocation.cpu_hz or dvfs is None:
            return
        d, power = self.devices, self.devices.energy.power
        hz = {int(c): float(f) for c, f in allocation.cpu_hz.items()}
        base_times, base_w = d.compute_s, power.compute_w_by_client
        d.compute_s = ClockedTimes(base_times, {  # type: ignore[assignment]
            c: float(dvfs.cycles_per_sample * dvfs.work_samples[c] / f) for c, f in hz.items()})
        watts = np.array(base_w, dtype=float)
        for c, f in hz.items():
            watts[c] = dvfs.kappa * f ** 3
        power.compute_w_by_client = watts

        def restore() -> None:
            d.compute_s, power.compute_w_by_client = base_times, base_w
        self._undo.append(restore)


def _nominal_bps(link: Link, clients: np.ndarray) -> np.ndarray:
    """Each client's rate on ``link`` over the whole band: at its mean SNR on the radio
    (B log2(1 + mean SNR), or the rate of its MCS on an NR link), else the channel's rate
    model at its configured SNR."""
    if isinstance(link, RadioLink):
        return np.asarray([link.mean_rate_bps(int(c)) for c in clients.tolist()], dtype=float)
    airtime_s = Link(IdealChannel(rate=link.cfg.rate)).transmit(0.0, 1, None).airtime_s
    return np.full(clients.size, 8.0 / airtime_s if airtime_s > 0 else math.inf)
