"""Device batteries and energy use: closed-form drain, one depletion timer per busy device.

Stored energy of every client lives in vectorised arrays (``stored_j`` as of time
``t_ref_s``). Net power is piecewise constant (docs/network-models.md section 3.1): a
device draws the power of its state (idle, rx, compute, tx) from the battery, except
inside a charging window, where it runs from the charger and the battery follows the
charge curve. Between rounds nothing is scheduled. Each device keeps the next time at
which its availability can change (its idle death E / P, its restart above
``restart_soc``, a window edge); when a round opens, the devices that are due are
advanced in closed form over the constant-power segments (split at the window edges),
which finds the idle deaths and the restarts exactly. The others are untouched, and
their energy stays exact for whenever they are next advanced. Only a device at work in
a round has a depletion timer; it is re-armed on each of its state changes and at each
window edge (SimPy cannot cancel a timeout: a generation number makes stale timers
harmless). When the timer finds the battery empty it interrupts the device's process
with cause ``"battery"``. Every timer moves the clock: a delay below the float clock's
resolution (late in long runs, or at absurd power) is one clock step, and a device that
rings a step late is charged only what its battery held.

Assumptions: a device that dies draws nothing until it restarts; a plugged-in device's
load comes from the charger; contention transmissions (slotted ALOHA) are charged when
their slot ends, on top of the idle power of waiting. Without a ``Battery`` config the
energy is infinite: the energy spent on round work is metered and nothing is interrupted.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import simpy

from simfl.core.config.energy import Battery, Energy
from simfl.core.records import Event
from simfl.core.rng import RngTree

#: stored energy at or below which a battery counts as empty (absorbs float rounding)
EMPTY_J = 1e-9
#: window edges closer than this to a time count as that time (seconds); far from
#: time 0, a few steps of the clock's float resolution instead (:func:`edge_tol_s`)
EDGE_S = 1e-9
#: steps of the clock's resolution (ulp) that an edge tolerance spans at least
EDGE_ULPS = 4


def edge_tol_s(t_s):
    """Tolerance around a time ``t_s`` (scalar or array) within which an edge counts as ``t_s``:
    EDGE_S, or ``EDGE_ULPS`` steps of the float clock where those are longer (late in long
    runs), so that "just after ``t_s``" is always a later clock value."""
    return np.maximum(EDGE_S, EDGE_ULPS * np.spacing(np.abs(t_s)))


def clock_delay_s(now_s: float, delay_s: float) -> float:
    """``delay_s``, or the smallest delay that moves a float clock at ``now_s`` forward
    when ``delay_s`` would leave it where it is (a timer must never fire at its own
    instant over and over)."""
    if now_s + delay_s > now_s:
        return delay_s
    return float(np.nextafter(now_s, np.inf) - now_s)


class Batteries:
    """Energy state of all ``n_clients`` devices.

    Parameters
    ----------
    battery:
        The battery of every device, or None for infinite energy.
    energy:
        Power (or energy per bit) of each state.
    tx_rate_bps:
        Nominal uplink bit rate: prices contention transmissions when energy is per bit.
    """

    def __init__(self, n_clients: int, battery: Battery | None, energy: Energy,
                 rngs: RngTree | None = None, tx_rate_bps: float = 0.0) -> None:
        self.cfg, self.energy = battery, energy
        self.n_clients = n_clients
        self.used_j = np.zeros(n_clients)  # energy spent on round work (rx, compute, tx)
        self.t_ref_s = np.zeros(n_clients)
        self.deaths = np.zeros(n_clients, dtype=np.int64)
        self._busy_w: dict[int, float] = {}  # power of each device at work in a round
        self._proc: dict[int, simpy.Process] = {}
        self._generation: dict[int, int] = {}
        self._round_j = 0.0
        self._round = -1  # the round open now (for the event records)
        self.env: simpy.Environment | None = None
        self.tx_rate_bps = tx_rate_bps
        if battery is None:
            return
        soc = np.full(n_clients, battery.initial_soc)
        if battery.initial_soc_min is not None:
            soc = rngs.stream("battery/initial_soc").uniform(
                battery.initial_soc_min, battery.initial_soc, size=n_clients)
        self.capacity_j = battery.capacity_j
        self.restart_j = battery.restart_soc * battery.capacity_j
        self.stored_j = soc * battery.capacity_j
        self.min_stored_j = self.stored_j.copy()
        self.dead = self.stored_j <= EMPTY_J
        self.t_flip_s = np.zeros(n_clients)  # next time a device's availability may change
        self.last_death_s = np.full(n_clients, np.nan)
        self.charging = battery.charging
        if self.charging is not None:
            c = self.charging
            self._period_s = c.period_h * 3600.0
            self._edges_s = np.array([c.start_hour, c.end_hour]) * 3600.0
            self._cv_j = None if c.cv_soc is None else c.cv_soc * battery.capacity_j
            self._tau_s = (c.cv_tau_s if c.cv_tau_s is not None else
                           (1.0 - (c.cv_soc or 0.0)) * battery.capacity_j / c.power_w)

    def bind(self, env: simpy.Environment, timer: Callable[[simpy.Environment, float], simpy.Event],
             log: Callable[[Event], None]) -> None:
        """Attach to the simulation clock; ``timer(env, delay)`` makes a depletion timer
        that fires after every ordinary event of its instant (so work that needs exactly
        the energy left completes)."""
        self.env, self._timer, self._log = env, timer, log

    # ------------------------------------------------------------------ population side

    def alive(self, round: int, t_s: float) -> np.ndarray:
        """Advance every device to ``t_s`` (closed form) and return who has energy."""
        self._round = round
        if self.cfg is None:
            return np.ones(self.n_clients, dtype=bool)
        due = self._idle(np.flatnonzero(self.t_flip_s <= t_s))
        if due.size:
            died, t_died = self._advance(due, t_s, self.energy.idle_w, busy=False)
            for client, t_die in zip(due[died].tolist(), t_died[died].tolist()):
                self._log(Event(t_die, "battery_dead", round, client, "idle"))
            self._plan(due, t_s)
        return ~self.dead

    def stored_at(self, t_s: float) -> np.ndarray:
        """Stored energy of every idle device at ``t_s`` (advances all of them: O(n))."""
        self.alive(self._round, t_s)
        self._advance(self._idle(np.arange(self.n_clients)), t_s, self.energy.idle_w, busy=False)
        return self.stored_j.copy()

    def _idle(self, clients: np.ndarray) -> np.ndarray:
        """``clients`` without those at work (a late device may work across a round's
        open; its energy is its process's business until :meth:`end`)."""
        return clients[~np.isin(clients, list(self._proc))] if self._proc else clients

    def is_dead(self, client: int) -> bool:
        return self.cfg is not None and bool(self.dead[client])

    def take_round_energy_j(self) -> float:
        """Energy spent on round work since the last call."""
        spent, self._round_j = self._round_j, 0.0
        return spent

    def table(self) -> dict[str, np.ndarray]:
        """Per-client records of every device that spent energy or died."""
        rows = np.flatnonzero((self.used_j > 0) | (self.deaths > 0))
        if self.cfg is not None and self.env is not None:
            self._advance(self._idle(rows), self.env.now, self.energy.idle_w, busy=False)
        table = {"client": rows, "energy_j": self.used_j[rows], "battery_deaths": self.deaths[rows]}
        if self.cfg is not None:
            table.update(min_stored_j=self.min_stored_j[rows], final_stored_j=self.stored_j[rows],
                         capacity_j=np.full(len(rows), self.capacity_j),
                         last_death_s=self.last_death_s[rows])
        return table

    # ------------------------------------------------------------------ device side

    def begin(self, client: int, process: simpy.Process) -> None:
        """``client`` starts its round work in ``process`` (interrupted if it dies)."""
        self._settle(client)
        self._proc[client] = process

    def switch(self, client: int, state: str, n_bits: float = 0.0, airtime_s: float = 0.0,
               wall_s: float | None = None) -> None:
        """``client`` enters ``state`` (``rx``, ``compute``, ``tx``) now; a transfer
        attempt passes its ``n_bits``, the ``airtime_s`` its radio is on and, when a MAC
        makes it last longer (TDMA slots), its ``wall_s``: the device then draws, over
        ``wall_s``, the average of the transfer's power over its airtime and idle power
        over the wait (same total; a death mid-attempt is placed by that average). Work
        outside a round (a sampler's query exchange, never begun) is not charged."""
        if client not in self._proc:
            return
        self._settle(client)
        power_w = self._power_w(client, state, n_bits, airtime_s)
        if wall_s is not None and wall_s != airtime_s and state in ("tx", "rx"):
            power_w = self._spread_w(power_w, airtime_s, wall_s)
        self._busy_w[client] = power_w
        if self.cfg is not None:
            self._arm(client)

    def end(self, client: int) -> None:
        """``client``'s round work is over (done, lost or interrupted): back to idle."""
        self._settle(client)
        self._busy_w.pop(client, None)
        self._proc.pop(client, None)
        if self.cfg is not None:
            self._generation[client] = self._generation.get(client, 0) + 1
            self._plan(np.array([client]), self.env.now)

    def charge_transmissions(self, clients: list[int], airtime_s: float) -> None:
        """Charge a contention transmission of ``airtime_s`` that just ended to each of
        ``clients`` (a MAC hook): ``airtime_s * tx_w``, or with ``tx_j_per_bit`` the bits
        that the uplink's nominal ``tx_rate_bps`` carries in that time.

        Charged as a lump when the slot ends: a device that cannot pay for it dies then
        (with what it had), at most one slot late.
        """
        e = self.energy
        watts = e.tx_w if e.tx_w is not None else e.tx_j_per_bit * self.tx_rate_bps
        if self.cfg is None:
            at_work = [c for c in clients if c in self._proc]
            if len(at_work) == 1:  # the usual busy slot; scalar indexing is cheaper
                self.used_j[at_work[0]] += watts * airtime_s
            else:
                self.used_j[at_work] += watts * airtime_s
            self._round_j += watts * airtime_s * len(at_work)
            return
        for client in clients:
            if client in self._proc:
                self._settle(client)
                self._spend_now(client, watts * airtime_s)
                self._arm(client)

    def _power_w(self, client: int, state: str, n_bits: float, airtime_s: float) -> float:
        e = self.energy
        if state == "compute":
            return e.compute_w
        if state == "idle":  # at work but waiting (e.g. for medium access)
            return e.idle_w
        watts, per_bit = (e.tx_w, e.tx_j_per_bit) if state == "tx" else (e.rx_w, e.rx_j_per_bit)
        if watts is not None:
            return watts
        if airtime_s > 0:
            return n_bits * per_bit / airtime_s
        self._spend_now(client, n_bits * per_bit)  # an instantaneous transfer: a lump
        return 0.0

    def _spread_w(self, power_w: float, airtime_s: float, wall_s: float) -> float:
        """Average power over ``wall_s`` of ``airtime_s`` at ``power_w`` and idle power for
        the rest (``power_w`` is 0 when :meth:`_power_w` charged the transfer as a lump)."""
        if wall_s <= 0:
            return power_w
        energy_j = power_w * airtime_s + self.energy.idle_w * max(wall_s - airtime_s, 0.0)
        return energy_j / wall_s

    def _spend_now(self, client: int, energy_j: float) -> None:
        """Spend ``energy_j`` at once; from the battery (unplugged) at most what it holds."""
        if self.cfg is not None and not self._plugged_after(self.env.now):
            energy_j = min(energy_j, max(self.stored_j[client], 0.0))
            self.stored_j[client] -= energy_j
        self.used_j[client] += energy_j
        self._round_j += energy_j

    def _settle(self, client: int) -> None:
        """Account ``client``'s energy from its last state change to now."""
        now = self.env.now
        power_w = self._busy_w.get(client)
        if power_w is None:  # idle since t_ref (between rounds, or after its work)
            if self.cfg is not None:
                died, t_died = self._advance(np.array([client]), now, self.energy.idle_w,
                                             busy=False)
                if died[0]:
                    self._log(Event(float(t_died[0]), "battery_dead", self._round, client, "idle"))
            self.t_ref_s[client] = now
            return
        spent = power_w * (now - self.t_ref_s[client])
        self.used_j[client] += spent
        self._round_j += spent
        if self.cfg is not None:
            self._advance(np.array([client]), now, power_w, busy=True)
        self.t_ref_s[client] = now

    def _arm(self, client: int) -> None:
        """(Re-)arm ``client``'s depletion timer for its current state (none without a battery)."""
        if self.cfg is None:
            return
        generation = self._generation.get(client, 0) + 1
        self._generation[client] = generation
        if self.dead[client]:
            return
        now, power_w = self.env.now, self._busy_w[client]
        delays = []
        if self.charging is not None:
            delays.append(float(self._next_edge(np.array([now]))[0]) - now)
        stored_j = max(self.stored_j[client], 0.0)
        if not self._plugged_after(now) and (power_w > 0 or stored_j <= EMPTY_J):
            delays.append(stored_j / power_w if power_w > 0 else 0.0)
        if delays:
            # a positive delay always moves the clock (below its resolution: one step),
            # so a re-armed timer cannot ring at the same instant forever
            delay_s = min(delays)
            timer = self._timer(self.env, clock_delay_s(now, delay_s) if delay_s > 0 else 0.0)
            timer.callbacks.append(lambda _event: self._ring(client, generation))

    def _ring(self, client: int, generation: int) -> None:
        if self._generation.get(client) != generation:
            return  # stale: the device changed state since this timer was armed
        lowest_j = self.min_stored_j[client]
        self._settle(client)
        if self.stored_j[client] > EMPTY_J or self._plugged_after(self.env.now):
            self._arm(client)
            return
        overdrawn_j = -min(self.stored_j[client], 0.0)
        if overdrawn_j > EMPTY_J:  # the timer rang up to a clock step late (huge power,
            self.used_j[client] -= overdrawn_j  # late in a run): it had only what it held
            self._round_j -= overdrawn_j
            self.min_stored_j[client] = min(lowest_j, 0.0)
        self.dead[client], self.stored_j[client] = True, 0.0
        self.deaths[client] += 1
        self.last_death_s[client] = self.env.now
        self._log(Event(self.env.now, "battery_dead", self._round, client, "at work"))
        process = self._proc.get(client)
        if process is not None and process.is_alive:
            process.interrupt("battery")

    # ------------------------------------------------------------------ closed forms

    def _advance(self, clients: np.ndarray, t_s: float, power_w: float,
                 busy: bool) -> tuple[np.ndarray, np.ndarray]:
        """Evolve ``clients`` from their ``t_ref_s`` to ``t_s`` drawing ``power_w``.

        Piecewise over charging-window edges: plugged in, the battery follows the
        charge curve and a dead device restarts once above ``restart_soc``; unplugged,
        a live device loses ``power_w * dt``. Idle devices (``busy=False``) that run out
        die at the exact time E / P and stop drawing; a busy device's depletion is its
        timer's business, so its energy is not clipped here (a late timer would show as
        negative energy in the records). Returns (died, time of death) per client.
        """
        stored, dead = self.stored_j[clients], self.dead[clients]
        lowest = self.min_stored_j[clients]
        t = self.t_ref_s[clients].copy()
        n_died = np.zeros(len(clients), dtype=np.int64)
        t_died = np.full(len(clients), np.nan)
        while True:
            active = t < t_s
            if not active.any():
                break
            end = np.full_like(t, t_s)
            if self.charging is not None:
                end = np.minimum(self._next_edge(t), t_s)
            end = np.where(active, end, t)
            dt = end - t
            plugged = active & self._plugged(t, end)
            drawing = active & ~plugged & ~dead
            drained = stored - power_w * dt
            if not busy and power_w > 0:
                empty = drawing & (drained <= EMPTY_J)
                t_died = np.where(empty, t + np.maximum(stored, 0.0) / power_w, t_died)
                n_died += empty
                dead = dead | empty
                drained = np.where(empty, 0.0, drained)
            charged = self._charge(stored, dt) if self.charging is not None else stored
            stored = np.where(plugged, charged, np.where(drawing, drained, stored))
            dead = dead & ~(plugged & (stored >= self.restart_j))
            lowest = np.minimum(lowest, stored)
            t = end
        self.stored_j[clients], self.dead[clients] = stored, dead
        self.min_stored_j[clients] = lowest
        self.t_ref_s[clients] = t_s
        self.deaths[clients] += n_died
        died = n_died > 0
        self.last_death_s[clients[died]] = t_died[died]
        return died, t_died

    def _plan(self, clients: np.ndarray, t_s: float) -> None:
        """Set when idle ``clients`` (advanced to ``t_s``) can next die, restart or
        change plug state."""
        stored, dead = self.stored_j[clients], self.dead[clients]
        idle_w = self.energy.idle_w
        flip = (np.where(dead, np.inf, t_s + stored / idle_w) if idle_w > 0
                else np.full(len(clients), np.inf))
        if self.charging is not None:
            t = np.full(len(clients), float(t_s))
            plugged = self._plugged(t, t + edge_tol_s(t))
            restart = np.where(plugged & dead, t_s + self._charge_time_s(stored), np.inf)
            flip = np.minimum(np.minimum(np.where(plugged, np.inf, flip), restart),
                              self._next_edge(t))
        self.t_flip_s[clients] = flip

    def _charge_time_s(self, stored_j: np.ndarray) -> np.ndarray:
        """Time to charge from ``stored_j`` to the restart threshold (inverse of _charge)."""
        c, cap, target = self.charging, self.capacity_j, self.restart_j
        if self._cv_j is None or target <= self._cv_j:
            return np.maximum(target - stored_j, 0.0) / c.power_w
        if target >= cap:
            return np.full(len(stored_j), np.inf)
        t_cc = np.maximum(self._cv_j - stored_j, 0.0) / c.power_w
        cv_from = np.maximum(stored_j, self._cv_j)
        return t_cc + self._tau_s * np.log((cap - cv_from) / (cap - target))

    def _charge(self, stored_j: np.ndarray, dt_s: np.ndarray) -> np.ndarray:
        """Stored energy after charging ``dt_s`` from ``stored_j`` (constant power, or CC-CV)."""
        c, cap = self.charging, self.capacity_j
        if self._cv_j is None:
            return np.minimum(cap, stored_j + c.power_w * dt_s)
        t_cc = np.maximum(self._cv_j - stored_j, 0.0) / c.power_w
        cv_from = np.maximum(stored_j, self._cv_j)
        cv = cap - (cap - cv_from) * np.exp(-np.maximum(dt_s - t_cc, 0.0) / self._tau_s)
        return np.where(dt_s <= t_cc, stored_j + c.power_w * dt_s, cv)

    def _phase_s(self, t_s):
        return np.mod(t_s, self._period_s)

    def _plugged(self, t0_s, t1_s):
        """Whether the segment [t0, t1] (no edge inside) lies in a charging window."""
        if self.charging is None:
            return np.zeros(np.shape(t0_s), dtype=bool) if np.ndim(t0_s) else False
        h = self._phase_s((np.asarray(t0_s) + np.asarray(t1_s)) / 2.0)
        start, stop = self._edges_s
        inside = (start <= h) & (h < stop) if start < stop else (h >= start) | (h < stop)
        return inside if np.ndim(inside) else bool(inside)

    def _plugged_after(self, t_s: float) -> bool:
        """Whether the device is plugged in just after ``t_s``."""
        return self._plugged(t_s, t_s + float(edge_tol_s(t_s)))

    def _next_edge(self, t_s: np.ndarray) -> np.ndarray:
        """The first window edge later than ``t_s`` (by more than :func:`edge_tol_s`)."""
        phase = self._phase_s(t_s)[:, None]
        wait = np.mod(self._edges_s[None, :] - phase, self._period_s)
        wait = np.where(wait <= edge_tol_s(t_s)[:, None], wait + self._period_s, wait)
        return t_s + wait.min(axis=1)

