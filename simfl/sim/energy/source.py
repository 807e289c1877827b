"""Where the devices' energy comes from, and the meter of what their round work spends.

:class:`~simfl.sim.energy.infinite.InfiniteEnergy` is the source without a store: it
meters the energy of round work (rx, compute, tx, and waiting for medium access) and never
stops a device. The finite source, :class:`simfl.sim.energy.battery.Batteries`, meters the
same way and adds the stored energy, depletion and charging. Devices use the same calls
with either: :meth:`~EnergyMeter.begin` a round's work, :meth:`~EnergyMeter.switch` state,
:meth:`~EnergyMeter.end` it; a contention MAC charges its transmissions through
:meth:`~EnergyMeter.charge_transmissions`.

Power is piecewise constant: each device at work draws the power of its state from its
last state change (``t_ref_s``) on, and the energy is settled at the next change (and
at each passed change of :mod:`~simfl.sim.energy.power_changes`). Work outside a round
(a sampler's query exchange, never begun) is not charged.
"""

from __future__ import annotations

from typing import Callable, Protocol, Sequence

import numpy as np
import simpy

from simfl.core.config.energy import Energy
from simfl.core.records import Event
from simfl.sim.energy.power_model import PowerModel
from simfl.sim.energy.power_changes import PowerChanges
from simfl.sim.links.channel import Bursts

#: ``timer(delay_s)``: an event that fires after every ordinary event of its instant
Timer = Callable[[float], simpy.Event]


class Work(Protocol):
    """A device's round work (a SimPy process, or the same steps on event callbacks)."""

    @property
    def is_alive(self) -> bool: ...

    def interrupt(self, cause: str) -> None: ...


class EnergyMeter:
    """Energy spent by ``n_clients`` devices on round work, with nothing stored behind it."""

    def __init__(self, n_clients: int, power: PowerModel) -> None:
        self.power = power
        self.n_clients = n_clients
        self.used_j = np.zeros(n_clients)  # energy spent on round work (rx, compute, tx)
        self.t_ref_s = np.zeros(n_clients)
        self.deaths = np.zeros(n_clients, dtype=np.int64)
        self._busy_w: dict[int, float] = {}  # power of each device at work in a round
        self.changes = PowerChanges()  # of devices whose radio is on in bursts
        self._proc: dict[int, Work] = {}
        self._round_j = 0.0
        self._round = -1  # the round open now (for the event records)
        self.env: simpy.Environment | None = None
        #: where the time comes from when not from the clock (a loop that runs a round's
        #: events without it sets this)
        self.time_source: Callable[[], float] | None = None

    @property
    def energy(self) -> Energy:
        return self.power.energy

    def bind(self, env: simpy.Environment | None, timer: Timer | None,
             log: Callable[[Event], None]) -> None:
        """Attach to the simulation clock; ``timer(delay_s)`` makes a depletion timer that
        fires after every ordinary event of its instant (so work that needs exactly the
        energy left completes); ``log`` takes event records."""
        self.env, self._timer, self._log = env, timer, log

    # ---- population side

    def alive(self, round: int, t_s: float) -> np.ndarray:
        """Who has energy at ``t_s`` (everyone)."""
        self._round = round
        return np.ones(self.n_clients, dtype=bool)

    def is_dead(self, client: int) -> bool:
        return False

    def take_round_energy_j(self) -> float:
        """Energy spent on round work since the last call."""
        spent, self._round_j = self._round_j, 0.0
        return spent

    def table(self) -> dict[str, np.ndarray]:
        """Per-client records of every device that spent energy or died."""
        return self._table(self._table_rows())

    def _table_rows(self) -> np.ndarray:
        return np.flatnonzero((self.used_j > 0) | (self.deaths > 0))

    def _table(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        return {"client": rows, "energy_j": self.used_j[rows], "battery_deaths": self.deaths[rows]}

    # ---- device side

    def begin(self, client: int, process: Work) -> None:
        """``client`` starts its round work in ``process`` (interrupted if it dies)."""
        self._settle(client)
        self._proc[client] = process

    def switch(self, client: int, state: str, n_bits: float = 0.0, airtime_s: float = 0.0,
               bursts: Bursts | None = None) -> None:
        """``client`` enters ``state`` (``idle``, ``rx``, ``compute``, ``tx``) now.

        A transfer attempt passes its ``n_bits``, its ``airtime_s`` at the link's full
        rate and, when a MAC makes it last longer (TDMA, a wait for a data channel), the
        ``bursts`` in which its radio is on (else: throughout); the device draws idle
        power between them. A client not at work in a round is not charged.
        """
        if client not in self._proc:
            return
        self._settle(client)
        self.changes.drop(client)
        power_w, lump_j = self.power.state_w(state, n_bits, airtime_s, client)
        if state == "compute" and self.power.compute_w_by_client is not None:
            power_w = float(self.power.compute_w_by_client[client])
        if lump_j is not None:  # an instantaneous per-bit transfer: a lump
            self._spend_now(client, lump_j)
        if bursts is not None and state in ("tx", "rx"):
            power_w = self.changes.plan(client, self.now_s(), power_w, self.power.idle_w,
                                        bursts)
        self._busy_w[client] = power_w
        self._arm(client)

    def end(self, client: int) -> None:
        """``client``'s round work is over (done, lost or interrupted): back to idle."""
        self._settle(client)
        self._busy_w.pop(client, None)
        self.changes.drop(client)
        self._proc.pop(client, None)

    def charge_transmissions(self, clients: list[int], airtime_s: float) -> None:
        """Charge a contention transmission of ``airtime_s`` that just ended to each of
        ``clients`` at work (a MAC hook), on top of the idle power they drew meanwhile:
        :meth:`PowerModel.contention_extra_w` over ``airtime_s``."""
        at_work = [c for c in clients if c in self._proc]
        if self.power.energy.amplifier is not None:  # each client's own draw
            for c in at_work:
                self._spend_now(c, self.power.contention_extra_w(c) * airtime_s)
            return
        watts = self.power.contention_extra_w()
        if len(at_work) == 1:  # the usual busy slot; scalar indexing is cheaper
            self.used_j[at_work[0]] += watts * airtime_s
        else:
            self.used_j[at_work] += watts * airtime_s
        self._round_j += watts * airtime_s * len(at_work)

    # ---- accounting

    def now_s(self) -> float:
        if self.time_source is not None:
            return self.time_source()
        assert self.env is not None, "bind() attaches the clock before any work"
        return float(self.env.now)

    def _settle(self, client: int) -> None:
        """Account ``client``'s energy from its last state change to now."""
        now = self.now_s()
        power_w = self._busy_w.get(client)
        if power_w is None:  # idle since t_ref (between rounds, or after its work)
            self._settle_idle(client, now)
            self.t_ref_s[client] = now
            return
        for t_s, power_w in self.changes.pieces(client, now, power_w):
            spent = power_w * (t_s - self.t_ref_s[client])
            self.used_j[client] += spent
            self._round_j += spent
            self._settle_busy(client, t_s, power_w)
            self.t_ref_s[client] = t_s
        self._busy_w[client] = power_w

    def _settle_idle(self, client: int, now_s: float) -> None:
        """Idle time is not metered (a store would drain)."""

    def _settle_busy(self, client: int, now_s: float, power_w: float) -> None:
        """The metered work needs no more (a store would drain)."""

    def _spend_now(self, client: int, energy_j: float) -> None:
        """Spend ``energy_j`` at once."""
        self.used_j[client] += energy_j
        self._round_j += energy_j

    def _arm(self, client: int) -> None:
        """Nothing can run out: no depletion timer."""
