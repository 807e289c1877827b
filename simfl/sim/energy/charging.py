"""When devices are plugged in, and how their batteries fill meanwhile.

A charging window recurs every ``period_h`` hours from ``start_hour`` to ``end_hour``
(it may wrap around the period's end). Plugged in, a device runs from the charger and
its battery follows the charge curve: constant power, or constant current up to
``cv_soc`` and then an exponential approach to full (time constant ``cv_tau_s``).
:class:`NoCharging` is the window that never opens.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simfl.core.config.energy import Charging

#: window edges closer than this to a time count as that time (seconds); far from
#: time 0, a few steps of the clock's float resolution instead (:func:`edge_tol_s`)
EDGE_S = 1e-9
#: steps of the clock's resolution (ulp) that an edge tolerance spans at least
EDGE_ULPS = 4


def edge_tol_s(t_s: Any) -> Any:
    """Tolerance around a time ``t_s`` (scalar or array) within which an edge counts as ``t_s``:
    EDGE_S, or ``EDGE_ULPS`` steps of the float clock where those are longer (late in long
    runs), so that "just after ``t_s``" is always a later clock value."""
    return np.maximum(EDGE_S, EDGE_ULPS * np.spacing(np.abs(t_s)))


class NoCharging:
    """Never plugged in: no edges, and a battery only drains."""

    def plugged(self, t0_s: Any, t1_s: Any) -> Any:
        """Whether the segment [t0, t1] (no edge inside) lies in a charging window (a bool
        for scalar times, else a mask)."""
        return np.zeros(np.shape(t0_s), dtype=bool) if np.ndim(t0_s) else False

    def plugged_after(self, t_s: float) -> bool:
        """Whether the device is plugged in just after ``t_s``."""
        return False

    def next_edge(self, t_s: np.ndarray) -> np.ndarray:
        """The first window edge later than ``t_s`` (infinite: none)."""
        return np.full(np.shape(t_s), np.inf)

    def charge(self, stored_j: np.ndarray, dt_s: np.ndarray) -> np.ndarray:
        """Stored energy after ``dt_s`` plugged in (never: unchanged)."""
        return stored_j

    def restart_in_s(self, stored_j: np.ndarray) -> np.ndarray:
        """Time plugged in from ``stored_j`` to the restart threshold (never)."""
        return np.full(len(stored_j), np.inf)


class ChargingWindow(NoCharging):
    """A recurring charging window for batteries of ``capacity_j`` that restart at ``restart_j``."""

    def __init__(self, cfg: Charging, capacity_j: float, restart_j: float) -> None:
        self.cfg, self.capacity_j, self.restart_j = cfg, capacity_j, restart_j
        self._period_s = cfg.period_h * 3600.0
        self._edges_s = np.array([cfg.start_hour, cfg.end_hour]) * 3600.0
        self._cv_j = None if cfg.cv_soc is None else cfg.cv_soc * capacity_j
        self._tau_s = (cfg.cv_tau_s if cfg.cv_tau_s is not None else
                       (1.0 - (cfg.cv_soc or 0.0)) * capacity_j / cfg.power_w)

    def plugged(self, t0_s: Any, t1_s: Any) -> Any:
        h = np.mod((np.asarray(t0_s) + np.asarray(t1_s)) / 2.0, self._period_s)
        start, stop = self._edges_s
        inside = (start <= h) & (h < stop) if start < stop else (h >= start) | (h < stop)
        return inside if np.ndim(inside) else bool(inside)

    def plugged_after(self, t_s: float) -> bool:
        return bool(self.plugged(t_s, t_s + float(edge_tol_s(t_s))))

    def next_edge(self, t_s: np.ndarray) -> np.ndarray:
        """The first window edge later than ``t_s`` (by more than :func:`edge_tol_s`)."""
        phase = np.mod(t_s, self._period_s)[:, None]
        wait = np.mod(self._edges_s[None, :] - phase, self._period_s)
        wait = np.where(wait <= edge_tol_s(t_s)[:, None], wait + self._period_s, wait)
        edge_s: np.ndarray = t_s + wait.min(axis=1)
        return edge_s

    def charge(self, stored_j: np.ndarray, dt_s: np.ndarray) -> np.ndarray:
        """Stored energy after charging ``dt_s`` from ``stored_j`` (constant power, or CC-CV)."""
        c, cap = self.cfg, self.capacity_j
        if self._cv_j is None:
            return np.minimum(cap, stored_j + c.power_w * dt_s)
        t_cc = np.maximum(self._cv_j - stored_j, 0.0) / c.power_w
        cv_from = np.maximum(stored_j, self._cv_j)
        cv = cap - (cap - cv_from) * np.exp(-np.maximum(dt_s - t_cc, 0.0) / self._tau_s)
        return np.where(dt_s <= t_cc, stored_j + c.power_w * dt_s, cv)

    def restart_in_s(self, stored_j: np.ndarray) -> np.ndarray:
        """Time to charge from ``stored_j`` to the restart threshold (inverse of :meth:`charge`)."""
        c, cap, target = self.cfg, self.capacity_j, self.restart_j
        if self._cv_j is None or target <= self._cv_j:
            return np.maximum(target - stored_j, 0.0) / c.power_w
        if target >= cap:
            return np.full(len(stored_j), np.inf)
        t_cc = np.maximum(self._cv_j - stored_j, 0.0) / c.power_w
        cv_from = np.maximum(stored_j, self._cv_j)
        wait_s: np.ndarray = t_cc + self._tau_s * np.log((cap - cv_from) / (cap - target))
        return wait_s
