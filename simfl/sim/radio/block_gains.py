"""Frequency-selective fading: a power gain per client, resource block and TTI.

The band's ``R`` resource blocks are grouped into coherence groups of
``coherence_blocks`` adjacent blocks (the last group may be narrower); the blocks of a
group share one gain, and the groups fade independently of each other (one block per
group: independent blocks). Each gain has mean 1 and follows the law of
``network.mac.selectivity``, a fading config of :mod:`simfl.core.config.fading`:
Rayleigh ``|s|^2`` with ``s ~ CN(0, 1)``, Rician ``|sqrt(K/(K+1)) + sqrt(1/(K+1)) s|^2``,
or unit gains (``none``). In time, on the TTI grid (TTI n covers ``[n, n + 1) tti_s``):

- ``coherence_s = 0``: a fresh ``s`` for every TTI in which the client is scheduled;
- ``coherence_s > 0``: block fading, one ``s`` per window ``floor(n tti_s / coherence_s)``,
  drawn afresh when a client is scheduled in a window it has not been seen in;
- ``doppler_hz``: Gauss-Markov, ``s <- rho s + sqrt(1 - rho^2) w`` with Jakes'
  ``rho = J0(2 pi f_d tau)`` over the lag ``tau`` since the client's last TTI.

The draws come from the stream ``mac/selectivity`` in the order of the TTIs (cells by
key, clients by id within one), so a run is reproduced by replaying its clock.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import j0

from simfl.core.config.fading import Fading, NoFading, RicianFading
from simfl.core.rng import RngTree
from simfl.sim.radio.fading import WINDOW_SLACK


def n_groups(blocks: int, coherence_blocks: int) -> int:
    """How many coherence groups ``blocks`` resource blocks form."""
    return -(-blocks // coherence_blocks)


class BlockGains:
    """The per-block gains of ``n_clients`` over ``blocks`` resource blocks (module
    docstring), advanced TTI by TTI for the clients that are scheduled.

    Parameters
    ----------
    cfg:
        The fading law and its memory in time.
    blocks, coherence_blocks:
        The band's resource blocks and how many adjacent ones share one gain.
    tti_s:
        The scheduling interval (s).
    rngs, n_clients:
        The run's random streams and how many clients there are.
    """

    def __init__(self, cfg: Fading, blocks: int, coherence_blocks: int, tti_s: float,
                 rngs: RngTree, n_clients: int) -> None:
        self.cfg, self.blocks, self.tti_s = cfg, blocks, tti_s
        self.coherence_blocks = coherence_blocks
        self.groups = n_groups(blocks, coherence_blocks)
        self.flat = isinstance(cfg, NoFading)
        k_factor = cfg.k_factor if isinstance(cfg, RicianFading) else 0.0
        self.los = math.sqrt(k_factor / (k_factor + 1.0))
        self.scatter = math.sqrt(1.0 / (k_factor + 1.0))
        self.rng = rngs.stream("mac/selectivity")
        # per client: its scattered parts, and the window (block fading) or TTI
        # (Gauss-Markov) they were last drawn for (-1: never)
        self.s = np.zeros((n_clients, self.groups), dtype=np.complex128)
        self.last = np.full(n_clients, -1, dtype=np.int64)

    def gains(self, clients: np.ndarray, tti: int) -> np.ndarray:
        """The power gains of ``clients`` (sorted ids) in TTI ``tti``: an array of
        ``clients.size`` rows and ``blocks`` columns."""
        if self.flat:
            return np.ones((clients.size, self.blocks))
        s = self._scattered(clients, tti)
        h = self.los + self.scatter * s
        power = h.real * h.real + h.imag * h.imag
        return np.repeat(power, self.coherence_blocks, axis=1)[:, :self.blocks]

    def _fresh(self, n: int) -> np.ndarray:
        """``n`` rows of CN(0, 1) draws, one per coherence group."""
        w = self.rng.standard_normal((n, self.groups, 2))
        return np.asarray((w[..., 0] + 1j * w[..., 1]) * math.sqrt(0.5))

    def _scattered(self, clients: np.ndarray, tti: int) -> np.ndarray:
        cfg, last = self.cfg, self.last[clients]
        if cfg.doppler_hz is not None:
            new = self._fresh(clients.size)
            lag_s = (tti - last) * self.tti_s
            rho = np.where(last < 0, 0.0, j0(2.0 * math.pi * cfg.doppler_hz * lag_s))
            rho = np.where(last == tti, 1.0, rho)[:, None]
            s = rho * self.s[clients] + np.sqrt(np.maximum(0.0, 1.0 - rho * rho)) * new
            self.s[clients], self.last[clients] = s, tti
            return np.asarray(s)
        if cfg.coherence_s == 0.0:
            return self._fresh(clients.size)
        window = int(math.floor(tti * self.tti_s / cfg.coherence_s + WINDOW_SLACK))
        stale = clients[last != window]
        if stale.size:
            self.s[stale], self.last[stale] = self._fresh(stale.size), window
        return np.asarray(self.s[clients])
