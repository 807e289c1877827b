"""Gilbert-Elliott links: a two-state (good/bad) loss chain per client, per attempt or in time
(the kinds ``gilbert_elliott`` and ``gilbert_elliott_continuous``)."""

from __future__ import annotations

import math

import numpy as np

from simfl.core.config.mac import CALLBACKS, PROCESS
from simfl.core.config.network import ContinuousGilbertElliottChannel, GilbertElliottChannel
from simfl.core.rng import RngTree
from simfl.sim.links.channel import Link


class GilbertElliottLink(Link):
    """Per-attempt Gilbert-Elliott chain of each client: one step per attempt."""

    cfg: GilbertElliottChannel
    draws = True
    engines = frozenset({PROCESS, CALLBACKS})
    cohort_capable = True

    def __init__(self, cfg: GilbertElliottChannel, rngs: RngTree | None = None) -> None:
        super().__init__(cfg, rngs)
        self._bad: dict[int, bool] = {}

    def _lost(self, t_s: float, airtime_s: float, snr: float | None, client: int,
              rng: np.random.Generator | None) -> bool:
        assert rng is not None, "a link that draws gets its stream"
        cfg = self.cfg
        u = rng.random()
        if client not in self._bad:
            bad = u < cfg.p_gb / (cfg.p_gb + cfg.p_bg)
        elif self._bad[client]:
            bad = u >= cfg.p_bg
        else:
            bad = u < cfg.p_gb
        self._bad[client] = bool(bad)
        return bool(rng.random() < (cfg.loss_bad if bad else cfg.loss_good))

    def lost_cohort(self, clients: np.ndarray, t_s: np.ndarray, airtime_s: float,
                    rng: np.random.Generator) -> np.ndarray:
        """Each client's chain one step on (from its stationary law at its first attempt),
        then the loss of the state it is in."""
        cfg, ids = self.cfg, clients.tolist()
        known = self._bad
        before = np.fromiter((known.get(c, -1) for c in ids), dtype=np.int8, count=len(ids))
        u = rng.random(len(ids))
        bad = np.where(before < 0, u < cfg.p_gb / (cfg.p_gb + cfg.p_bg),
                       np.where(before == 1, u >= cfg.p_bg, u < cfg.p_gb))
        known.update(zip(ids, bad.tolist()))
        return np.asarray(rng.random(len(ids)) < np.where(bad, cfg.loss_bad, cfg.loss_good))


class ContinuousGilbertElliottLink(Link):
    """Continuous-time Gilbert-Elliott chain of each client, sampled when the link is used.

    Per client it keeps the state at its last attempt and the already drawn time at
    which that state ends. An attempt starting at ``t_s`` before that time sees the same
    state; after it, the state at ``t_s`` comes from the exact two-state transition
    probabilities over the time since the change, and a fresh exponential sojourn is
    drawn (memorylessness makes this exact). An attempt that starts Good survives iff
    the Good sojourn outlasts its airtime. Knowing the end of the current sojourn keeps
    this exact when an attempt is cut short (deadline) and the next one starts earlier
    than the end of its airtime.
    """

    cfg: ContinuousGilbertElliottChannel
    draws = True
    engines = frozenset({PROCESS, CALLBACKS})
    cohort_capable = True

    def __init__(self, cfg: ContinuousGilbertElliottChannel, rngs: RngTree | None = None) -> None:
        super().__init__(cfg, rngs)
        #: client -> (bad at its last attempt, end of that sojourn, last attempt start)
        self._seen: dict[int, tuple[bool, float, float]] = {}

    def _lost(self, t_s: float, airtime_s: float, snr: float | None, client: int,
              rng: np.random.Generator | None) -> bool:
        assert rng is not None, "a link that draws gets its stream"
        cfg = self.cfg
        a, b = cfg.rate_gb_per_s, cfg.rate_bg_per_s
        pi_bad = a / (a + b)
        if client not in self._seen:
            bad, t_change = bool(rng.random() < pi_bad), -math.inf
        else:
            bad, t_change, t_last = self._seen[client]
            if t_s < t_last:
                raise ValueError(f"client {client}: attempt at {t_s} s before one at {t_last} s")
        if t_change <= t_s:
            if t_change > -math.inf:  # the sojourn ended: bad flipped at t_change, evolve to t_s
                decay = math.exp(-(a + b) * (t_s - t_change))
                p_bad = pi_bad + (1.0 - pi_bad) * decay if not bad else pi_bad * (1.0 - decay)
                bad = bool(rng.random() < p_bad)
            leave_per_s = b if bad else a
            t_change = t_s + (rng.exponential(1.0 / leave_per_s) if leave_per_s > 0 else math.inf)
        self._seen[client] = (bad, t_change, t_s)
        u = rng.random()
        if bad:
            return bool(u < cfg.loss_bad)
        return t_change < t_s + airtime_s or bool(u < cfg.loss_good)


    def lost_cohort(self, clients: np.ndarray, t_s: np.ndarray, airtime_s: float,
                    rng: np.random.Generator) -> np.ndarray:
        """Each client's state at ``t_s`` (kept while its drawn sojourn lasts, else drawn
        from the transition law since the change, and a fresh sojourn), then the loss of
        an attempt of ``airtime_s`` from there, as :meth:`_lost` does for one."""
        cfg, ids, n = self.cfg, clients.tolist(), clients.size
        a, b = cfg.rate_gb_per_s, cfg.rate_bg_per_s
        pi_bad = a / (a + b)
        seen = self._seen
        first = (False, -math.inf, -math.inf)
        last = np.array([seen.get(c, first) for c in ids], dtype=float).reshape(n, 3)
        known = np.fromiter((c in seen for c in ids), dtype=bool, count=n)
        early = known & (t_s < last[:, 2])
        if early.any():
            i = int(np.flatnonzero(early)[0])
            raise ValueError(f"client {ids[i]}: attempt at {t_s[i]} s before one at "
                             f"{last[i, 2]} s")
        bad = np.where(known, last[:, 0] > 0, rng.random(n) < pi_bad)
        t_change = last[:, 1]
        ended = t_change <= t_s  # never seen: -inf, a sojourn to draw
        moved = ended & known
        decay = np.exp(-(a + b) * (t_s - np.where(moved, t_change, t_s)))
        p_bad = np.where(bad, pi_bad * (1.0 - decay), pi_bad + (1.0 - pi_bad) * decay)
        bad = np.where(moved, rng.random(n) < p_bad, bad)
        leave_per_s = np.where(bad, b, a)
        sojourn_s = np.full(n, math.inf)
        np.divide(rng.standard_exponential(n), leave_per_s, out=sojourn_s,
                  where=leave_per_s > 0)
        t_change = np.where(ended, t_s + sojourn_s, t_change)
        seen.update(zip(ids, zip(bad.tolist(), t_change.tolist(), t_s.tolist())))
        u = rng.random(n)
        return np.asarray(np.where(bad, u < cfg.loss_bad,
                                   (t_change < t_s + airtime_s) | (u < cfg.loss_good)))
