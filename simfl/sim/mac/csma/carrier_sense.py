"""IEEE 802.11 DCF with a carrier-sense range (``carrier_sense_range_m``): hidden terminals.

Station i senses station j's frames when they are at most ``carrier_sense_range_m``
apart, on the shared radio's positions at the moment j starts sending (mobility moves
them). Each round picks its model when it opens, from the positions of the clients that
take part: when every pair of them is in range, the round runs the shared DCF of
:class:`~simfl.sim.mac.csma.access.CsmaCa` (every fast path included, the same results to
the last bit as without a range); otherwise it runs the per-station model of
:class:`~simfl.sim.mac.csma.hidden.HiddenDcf`, event by event on the clock, each
contender's radio switched as its own view of the medium changes (it overhears only the
frames it senses, and the access point's answers).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import simpy

from simfl.core.config.csma import CsmaCaMac
from simfl.core.records import MacSlots
from simfl.core.rng import RngTree
from simfl.sim.energy.source import EnergyMeter
from simfl.sim.links.channel import Link
from simfl.sim.mac.protocol import OnTransmit
from simfl.sim.mac.csma.access import CsmaCa, Switch
from simfl.sim.mac.csma.airtime import Airtime
from simfl.sim.mac.csma.dcf import Dcf
from simfl.sim.mac.csma.hidden import HiddenDcf
from simfl.sim.radio.capture import Air
from simfl.sim.radio.radio_map import RadioMap

#: most clients whose pairwise distances a round's opening checks (beyond, a bound decides)
MAX_PAIRWISE = 4096
#: ``spend(client, energy_j)``: charge a lump of energy (the shared DCF's sums)
Spend = Callable[[int, float], None]


def all_in_range(x_m: np.ndarray, y_m: np.ndarray, range_m: float) -> bool:
    """Whether every pair of the points is at most ``range_m`` apart.

    Exact up to :data:`MAX_PAIRWISE` points (by blocks of rows); beyond, True only when
    twice the largest distance from the centroid is within range (a sufficient bound)."""
    if x_m.size < 2:
        return True
    reach = np.hypot(x_m - x_m.mean(), y_m - y_m.mean()).max()
    if 2.0 * reach <= range_m:
        return True
    if x_m.size > MAX_PAIRWISE:
        return False
    for start in range(0, x_m.size, 256):
        d = np.hypot(x_m[start:start + 256, None] - x_m, y_m[start:start + 256, None] - y_m)
        if (d > range_m).any():
            return False
    return True


class RangedCsmaCa(CsmaCa):
    """:class:`CsmaCa` whose stations sense each other within ``carrier_sense_range_m``."""

    def __init__(self, cfg: CsmaCaMac, env: simpy.Environment, rngs: RngTree, n_clients: int,
                 on_transmit: OnTransmit | None = None) -> None:
        self.map: RadioMap | None = None
        self.meter: EnergyMeter | None = None
        self.sums: tuple[Airtime | None, Spend | None, Switch | None] | None = None
        self.partial = False  # this round runs the per-station model
        self.hidden_rounds = 0  # rounds that ran it (a run's warning says how many)
        super().__init__(cfg, env, rngs, n_clients, on_transmit)

    def _rate(self, rate_bps: float) -> None:
        super()._rate(rate_bps)
        self.full: Dcf = self.dcf
        self.hidden = HiddenDcf(self.cfg, self.timing, self.dcf.rng, self._senses, self._radio_to)

    def attach(self, air: Air) -> None:
        assert air.radio_map is not None, "a carrier-sense range needs positions (config)"
        self.map = air.radio_map

    def bind_upload(self, energy: EnergyMeter, uplink: Link, update_bytes: int) -> None:
        super().bind_upload(energy, uplink, update_bytes)
        self.meter = energy
        self.sums = self.airtime, self.spend, self.switch  # the shared DCF's energy path

    def open_round(self, round: int, started: np.ndarray) -> None:
        m = self.map
        assert m is not None and self.cfg.carrier_sense_range_m is not None
        self.partial = not all_in_range(m.x_m[started], m.y_m[started],
                                        self.cfg.carrier_sense_range_m)
        self.dcf = self.hidden if self.partial else self.full  # type: ignore[assignment]
        self.hidden_rounds += self.partial
        if self.sums is not None and self.meter is not None:
            self.airtime, self.spend, self.switch = (
                (None, None, self.meter.switch) if self.partial else self.sums)
        super().open_round(round, started)

    def close_round(self) -> tuple[MacSlots, ...]:
        if self.partial:
            self.hidden.ap.flush()
        return super().close_round()

    def _senses(self, sender: int, stations: np.ndarray) -> np.ndarray:
        m, range_m = self.map, self.cfg.carrier_sense_range_m
        assert m is not None and range_m is not None
        d_m = np.hypot(m.x_m[stations] - m.x_m[sender], m.y_m[stations] - m.y_m[sender])
        return np.asarray(d_m <= range_m)

    def _radio_to(self, client: int, state: str) -> None:
        """The per-station model's radio change, to the meter (contenders only)."""
        if self.switch is not None and client in self._waiting:
            if state == "idle":
                self.switch(client, "idle", 0.0, 0.0)
            else:
                self._radio(self.switch, client, state, 1.0)

    # ---- the per-station model on the clock

    def _schedule(self) -> None:
        if not self.partial:
            super()._schedule()
            return
        self._wake_gen += 1  # a wake scheduled before is stale, also when nothing is left
        t_s = self.hidden.next_event_s()
        if t_s is None:
            return
        gen = self._wake_gen
        self.env.timeout(max(0.0, t_s - self.env.now)).callbacks.append(
            lambda _: self._step(gen))

    def _step(self, gen: int, _event: simpy.Event | None = None) -> None:
        if gen == self._wake_gen:
            self._finish(self.hidden.step()[1])
