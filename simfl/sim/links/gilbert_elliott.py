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

