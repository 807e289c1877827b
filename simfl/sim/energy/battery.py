"""Device batteries: closed-form drain, one depletion timer per busy device.

The stored energy of every client and its closed-form evolution over piecewise-constant
power (idle deaths at E / P, restarts above ``restart_soc`` inside a charging window) are
a :class:`~simfl.sim.energy.battery_store.BatteryStore`'s. Between rounds nothing is scheduled:
when a round opens, the devices whose availability may have changed since are advanced
in closed form, and the others stay untouched until they are next due. Only a device at
work in a round has a depletion timer; it is re-armed on each of its state changes and at
each window edge (SimPy cannot cancel a timeout: a generation number makes stale timers
harmless). When the timer finds the battery empty it interrupts the device's process with
cause ``"battery"``. Every timer moves the clock: a delay below the float clock's
resolution (late in long runs, or at absurd power) is one clock step, and a device that
rings a step late is charged only what its battery held.

Assumptions: a device that dies draws nothing until it restarts; a plugged-in device's load
comes from the charger; a contention transmission (slotted ALOHA) is charged when its slot
ends, as transmit power over the slot instead of the idle power of waiting. Without a ``Battery`` config the energy is infinite
(:class:`~simfl.sim.energy.infinite.InfiniteEnergy`).
"""

from __future__ import annotations

import numpy as np

from simfl.core.config.energy import Battery, Energy
from simfl.core.records import Event, EventKind
from simfl.core.rng import RngTree
from simfl.sim.energy.battery_store import EMPTY_J, BatteryStore
from simfl.sim.energy.charging import ChargingWindow, NoCharging
from simfl.sim.clock import clock_delay_s
from simfl.sim.energy.source import EnergyMeter
from simfl.sim.energy.infinite import InfiniteEnergy
from simfl.sim.energy.power_model import PowerModel

__all__ = ["EMPTY_J", "Batteries", "build_energy_source"]


class Batteries(EnergyMeter):
    """Batteries of all ``n_clients`` devices.

    Parameters
    ----------
    battery:
        The battery of every device.
    energy:
        Power (or energy per bit) of each state.
    rngs:
        Random streams (needed for initial charges drawn per device).
    tx_rate_bps:
        Nominal uplink bit rate: prices contention transmissions when energy is per bit.
    """

    def __init__(self, n_clients: int, battery: Battery, energy: Energy,
                 rngs: RngTree | None = None, tx_rate_bps: float = 0.0) -> None:
        super().__init__(n_clients, PowerModel(energy, tx_rate_bps))
        self.cfg = battery
        self._generation: dict[int, int] = {}
        soc = np.full(n_clients, battery.initial_soc)
        if battery.initial_soc_min is not None:
            assert rngs is not None, "initial charges drawn per device need the streams"
            soc = rngs.stream("battery/initial_soc").uniform(
                battery.initial_soc_min, battery.initial_soc, size=n_clients)
        self.capacity_j = battery.capacity_j
        self.restart_j = battery.restart_soc * battery.capacity_j
        self.window = (NoCharging() if battery.charging is None else
                       ChargingWindow(battery.charging, self.capacity_j, self.restart_j))
        self.store = BatteryStore(soc * battery.capacity_j, self.restart_j, self.window)

    # ---- the store's state that the records and the tests read

    @property
    def stored_j(self) -> np.ndarray:
        """Stored energy of each device as of its ``t_ref_s``."""
        return self.store.stored_j

    @property
    def min_stored_j(self) -> np.ndarray:
        """Lowest stored energy each device reached."""
        return self.store.min_stored_j

    @property
    def last_death_s(self) -> np.ndarray:
        """Time of each device's last death (nan: never died)."""
        return self.store.last_death_s

    # ---- population side

    def alive(self, round: int, t_s: float) -> np.ndarray:
        """Advance every device to ``t_s`` (closed form) and return who has energy."""
        self._round = round
        due = self._idle(np.flatnonzero(self.store.t_flip_s <= t_s))
        if due.size:
            died, t_died = self._advance(due, t_s, self.power.idle_w, busy=False)
            for client, t_die in zip(due[died].tolist(), t_died[died].tolist()):
                self._log(Event(t_die, EventKind.BATTERY_DEAD, round, client, "idle"))
            self._plan(due, t_s)
        alive: np.ndarray = ~self.store.dead
        return alive

    def stored_at(self, t_s: float) -> np.ndarray:
        """Stored energy of every idle device at ``t_s`` (advances all of them: O(n))."""
        self.alive(self._round, t_s)
        self._advance(self._idle(np.arange(self.n_clients)), t_s, self.power.idle_w, busy=False)
        stored_j: np.ndarray = self.stored_j.copy()
        return stored_j

    def _idle(self, clients: np.ndarray) -> np.ndarray:
        """``clients`` without those at work (a late device may work across a round's
        open; its energy is its process's business until :meth:`end`)."""
        return clients[~np.isin(clients, list(self._proc))] if self._proc else clients

    def is_dead(self, client: int) -> bool:
        return bool(self.store.dead[client])

    def table(self) -> dict[str, np.ndarray]:
        rows = self._table_rows()
        if self.env is not None:
            self._advance(self._idle(rows), self.now_s(), self.power.idle_w, busy=False)
        table = self._table(rows)
        table.update(min_stored_j=self.min_stored_j[rows], final_stored_j=self.stored_j[rows],
                     capacity_j=np.full(len(rows), self.capacity_j),
                     last_death_s=self.last_death_s[rows])
        return table

    # ---- device side

    def end(self, client: int) -> None:
        super().end(client)
        self._generation[client] = self._generation.get(client, 0) + 1
        self._plan(np.array([client]), self.now_s())

    def charge_transmissions(self, clients: list[int], airtime_s: float) -> None:
        """Charged as a lump when the slot ends, on top of the idle power drawn over it
        (:meth:`PowerModel.contention_extra_w`): a device that cannot pay for it dies
        then (with what it had), at most one slot late."""
        by_client = self.power.energy.amplifier is not None  # each client's own draw
        energy_j = 0.0 if by_client else self.power.contention_extra_w() * airtime_s
        for client in clients:
            if client in self._proc:
                self._settle(client)
                self._spend_now(client, self.power.contention_extra_w(client) * airtime_s
                                if by_client else energy_j)
                self._arm(client)

    # ---- accounting against the store

    def _settle_idle(self, client: int, now_s: float) -> None:
        died, t_died = self._advance(np.array([client]), now_s, self.power.idle_w, busy=False)
        if died[0]:
            self._log(Event(float(t_died[0]), EventKind.BATTERY_DEAD, self._round, client, "idle"))

    def _settle_busy(self, client: int, now_s: float, power_w: float) -> None:
        self._advance(np.array([client]), now_s, power_w, busy=True)

    def _spend_now(self, client: int, energy_j: float) -> None:
        """Spend ``energy_j`` at once; from the battery (unplugged) at most what it holds."""
        if not self.window.plugged_after(self.now_s()):
            energy_j = min(energy_j, max(self.stored_j[client], 0.0))
            self.stored_j[client] -= energy_j
        super()._spend_now(client, energy_j)

    def _arm(self, client: int) -> None:
        """(Re-)arm ``client``'s depletion timer for its current state."""
        generation = self._generation.get(client, 0) + 1
        self._generation[client] = generation
        if self.store.dead[client]:
            return
        now, power_w = self.now_s(), self._busy_w[client]
        delays = []
        edge_s = float(self.window.next_edge(np.array([now]))[0])
        if edge_s < np.inf:
            delays.append(edge_s - now)
        stored_j = max(self.stored_j[client], 0.0)
        if not self.window.plugged_after(now):  # empty where the piecewise power drains it
            empty_s = (0.0 if stored_j <= EMPTY_J and power_w <= 0 else
                       self.changes.until_spent_s(client, now, power_w, stored_j))
            if empty_s < np.inf:
                delays.append(empty_s)
        if delays:
            # a positive delay always moves the clock (below its resolution: one step),
            # so a re-armed timer cannot ring at the same instant forever
            delay_s = min(delays)
            assert self._timer is not None, "bind() attaches the clock before any work"
            timer = self._timer(clock_delay_s(now, delay_s) if delay_s > 0 else 0.0)
            timer.callbacks.append(lambda _event: self._ring(client, generation))

    def _ring(self, client: int, generation: int) -> None:
        if self._generation.get(client) != generation:
            return  # stale: the device changed state since this timer was armed
        lowest_j = self.min_stored_j[client]
        self._settle(client)
        if self.stored_j[client] > EMPTY_J or self.window.plugged_after(self.now_s()):
            self._arm(client)
            return
        overdrawn_j = -min(self.stored_j[client], 0.0)
        if overdrawn_j > EMPTY_J:  # the timer rang up to a clock step late (huge power,
            self.used_j[client] -= overdrawn_j  # late in a run): it had only what it held
            self._round_j -= overdrawn_j
            self.min_stored_j[client] = min(lowest_j, 0.0)
        self.store.dead[client], self.stored_j[client] = True, 0.0
        self.deaths[client] += 1
        self.last_death_s[client] = self.now_s()
        self._log(Event(self.now_s(), EventKind.BATTERY_DEAD, self._round, client, "at work"))
        process = self._proc.get(client)
        if process is not None and process.is_alive:
            process.interrupt("battery")

    # ---- closed forms (the store's), on the meter's clock

    def _advance(self, clients: np.ndarray, t_s: float, power_w: float,
                 busy: bool) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`BatteryStore.advance` of ``clients`` from their ``t_ref_s`` to ``t_s``
        drawing ``power_w``, counting their deaths. Returns (died, time of death) per client.
        """
        n_died, t_died = self.store.advance(clients, self.t_ref_s[clients], t_s, power_w, busy)
        self.t_ref_s[clients] = t_s
        self.deaths[clients] += n_died
        return n_died > 0, t_died

    def _plan(self, clients: np.ndarray, t_s: float) -> None:
        """Set when idle ``clients`` (advanced to ``t_s``) can next die, restart or
        change plug state."""
        self.store.plan(clients, t_s, self.power.idle_w)


def build_energy_source(n_clients: int, battery: Battery | None, energy: Energy,
                        rngs: RngTree | None = None, tx_rate_bps: float = 0.0) -> EnergyMeter:
    """The devices' energy source: :class:`Batteries` of config ``battery``, or
    :class:`~simfl.sim.energy.infinite.InfiniteEnergy` when it is None."""
    if battery is None:
        return InfiniteEnergy(n_clients, energy, tx_rate_bps)
    return Batteries(n_clients, battery, energy, rngs, tx_rate_bps)
