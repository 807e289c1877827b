"""The energy stored in the devices' batteries, evolved in closed form.

Stored energy of every client lives in vectorised arrays (``stored_j`` as of the time the
caller last advanced it, its ``t_ref_s``). Net power is piecewise constant
(docs/network-models.md section 3.1): a device draws the power of its state
(:class:`~simfl.sim.energy.power_model.PowerModel`) from the battery, except inside a charging
window (:mod:`simfl.sim.energy.charging`), where it runs from the charger and the battery follows
the charge curve. Each device keeps the next time at which its availability can change
(``t_flip_s``: its idle death E / P, its restart above ``restart_soc``, a window edge);
:meth:`BatteryStore.advance` evolves devices in closed form over the constant-power
segments (split at the window edges), which finds the idle deaths and the restarts exactly.
Devices not advanced are untouched, and their energy stays exact for whenever they are
next advanced. Timers, metering and event records are the business of
:class:`simfl.sim.energy.battery.Batteries`, which holds this store.
"""

from __future__ import annotations

import numpy as np

from simfl.sim.energy.charging import NoCharging, edge_tol_s

#: stored energy at or below which a battery counts as empty (absorbs float rounding)
EMPTY_J = 1e-9


class BatteryStore:
    """Stored energy of a population of batteries.

    Parameters
    ----------
    stored_j:
        Initial stored energy of each device (kept, and updated in place).
    restart_j:
        Stored energy above which a dead device restarts while plugged in.
    window:
        When the devices are plugged in, and how their batteries fill meanwhile.
    """

    def __init__(self, stored_j: np.ndarray, restart_j: float, window: NoCharging) -> None:
        self.restart_j = restart_j
        self.window = window
        self.stored_j = stored_j
        self.min_stored_j: np.ndarray = self.stored_j.copy()
        self.dead: np.ndarray = self.stored_j <= EMPTY_J
        self.t_flip_s = np.zeros(len(stored_j))  # next time a device's availability may change
        self.last_death_s = np.full(len(stored_j), np.nan)

    def advance(self, clients: np.ndarray, t_from_s: np.ndarray, t_s: float, power_w: float,
                busy: bool) -> tuple[np.ndarray, np.ndarray]:
        """Evolve ``clients`` from ``t_from_s`` (per client) to ``t_s`` drawing ``power_w``.

        Piecewise over charging-window edges: plugged in, the battery follows the
        charge curve and a dead device restarts once above ``restart_soc``; unplugged,
        a live device loses ``power_w * dt``. Idle devices (``busy=False``) that run out
        die at the exact time E / P and stop drawing; a busy device's depletion is its
        timer's business, so its energy is not clipped here (a late timer would show as
        negative energy in the records). Returns (number of deaths, time of the last
        death) per client.
        """
        window = self.window
        stored, dead = self.stored_j[clients], self.dead[clients]
        lowest = self.min_stored_j[clients]
        t = t_from_s.copy()
        n_died = np.zeros(len(clients), dtype=np.int64)
        t_died = np.full(len(clients), np.nan)
        while True:
            active = t < t_s
            if not active.any():
                break
            end = np.where(active, np.minimum(window.next_edge(t), t_s), t)
            dt = end - t
            plugged = active & window.plugged(t, end)
            drawing = active & ~plugged & ~dead
            drained = stored - power_w * dt
            if not busy and power_w > 0:
                empty = drawing & (drained <= EMPTY_J)
                t_died = np.where(empty, t + np.maximum(stored, 0.0) / power_w, t_died)
                n_died += empty
                dead = dead | empty
                drained = np.where(empty, 0.0, drained)
            charged = window.charge(stored, dt)
            stored = np.where(plugged, charged, np.where(drawing, drained, stored))
            dead = dead & ~(plugged & (stored >= self.restart_j))
            lowest = np.minimum(lowest, stored)
            t = end
        self.stored_j[clients], self.dead[clients] = stored, dead
        self.min_stored_j[clients] = lowest
        died = n_died > 0
        self.last_death_s[clients[died]] = t_died[died]
        return n_died, t_died

    def plan(self, clients: np.ndarray, t_s: float, idle_w: float) -> None:
        """Set when idle ``clients`` (advanced to ``t_s``, drawing ``idle_w``) can next
        die, restart or change plug state."""
        stored, dead = self.stored_j[clients], self.dead[clients]
        flip = (np.where(dead, np.inf, t_s + stored / idle_w) if idle_w > 0
                else np.full(len(clients), np.inf))
        t = np.full(len(clients), float(t_s))
        plugged = self.window.plugged(t, t + edge_tol_s(t))
        restart = np.where(plugged & dead, t_s + self.window.restart_in_s(stored), np.inf)
        flip = np.minimum(np.minimum(np.where(plugged, np.inf, flip), restart),
                          self.window.next_edge(t))
        self.t_flip_s[clients] = flip
