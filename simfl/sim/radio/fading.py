"""Small-scale fading with memory: the power gain |h|^2 of each client and direction.

The complex gain h has E|h|^2 = 1. Rayleigh: h = s, the scattered part, s ~ CN(0, 1), so
|h|^2 ~ Exp(1). Rician with factor K: h = sqrt(K / (K + 1)) + sqrt(1 / (K + 1)) s, a
fixed line-of-sight part (phase 0: only |h| matters) plus the scattered part.

Memory (``network.radio.fading``):

- ``coherence_s > 0``, block fading: one draw of s per client, direction and window
  ``floor(t / coherence_s)``, addressed by (client, window) in the stream
  ``radio/fading/<direction>`` (:mod:`simfl.sim.radio.keyed`), so a window's gain does
  not depend on the order of the queries or on other clients;
- ``coherence_s = 0``: a fresh s for every attempt, the client's n-th draw for its n-th
  attempt;
- ``doppler_hz``: s is a Gauss-Markov (first-order autoregressive) process advanced
  lazily at the attempts that query it: s(t + tau) = rho s(t) + sqrt(1 - rho^2) w with
  Jakes' rho = J0(2 pi f_d tau), w ~ CN(0, 1) the client's next draw. The process has
  the Jakes correlation between any two successive queries; over several steps it is
  an approximation (the correlation of s over lag tau is J0 only for one step), so the
  level-crossing rate and fade durations are those of the continuous Jakes process only
  approximately.

A run's fading state (the draw counts, the last query time and s of each client) is
rebuilt when a checkpoint is resumed: the resume replays the simulated clock from the
start, and every draw depends only on the seed, the names above and the queries' times.
"""

from __future__ import annotations

import cmath
import math

import numpy as np
from scipy.special import j0

from simfl.core.config.fading import Fading, NoFading, RayleighFading, RicianFading
from simfl.core.registry import implementation_of, implements
from simfl.core.rng import RngTree
from simfl.sim.radio.keyed import KeyedUniforms
from simfl.sim.radio.link import FadingGains, UnitGain


#: a time this close (in windows) below a window's start is in that window, so that
#: 0.3 s is in window 3 of 0.1 s although 0.3 / 0.1 < 3 in floating point
WINDOW_SLACK = 1e-9


def jakes_rho(doppler_hz: float, tau_s: float) -> float:
    """Jakes' correlation J0(2 pi f_d tau) of the complex gain over a lag ``tau_s``."""
    return float(j0(2.0 * math.pi * doppler_hz * tau_s))


def _complex_normal(u_radius: float, u_angle: float) -> complex:
    """One CN(0, 1) draw from two uniforms: |s|^2 ~ Exp(1), phase uniform."""
    return cmath.rect(math.sqrt(-math.log1p(-u_radius)), 2.0 * math.pi * u_angle)


class FadingProcess:
    """The fading gains of one direction's clients (module docstring).

    Parameters
    ----------
    cfg:
        The fading law and its memory (``rayleigh`` or ``rician``).
    direction:
        ``uplink`` or ``downlink`` (part of the stream names).
    rngs:
        The run's random streams.
    n_clients:
        How many clients there are.
    """

    draws = True

    def __init__(self, cfg: Fading, direction: str, rngs: RngTree, n_clients: int) -> None:
        self.cfg, self.rngs = cfg, rngs
        self.prefix = f"radio/fading/{direction}"
        k_factor = cfg.k_factor if isinstance(cfg, RicianFading) else 0.0
        self.los = math.sqrt(k_factor / (k_factor + 1.0))
        self.scatter = math.sqrt(1.0 / (k_factor + 1.0))
        self.coherence_s, self.doppler_hz = cfg.coherence_s, cfg.doppler_hz
        # per client: the window (block) or the time (Gauss-Markov) of its last query
        # (-1 / nan: none yet), and the scattered part s it saw then
        self.window = np.full(n_clients, -1, dtype=np.int64)
        self.t_last_s = np.full(n_clients, np.nan)
        self.s = np.zeros(n_clients, dtype=np.complex128)
        self.n_draws = np.zeros(n_clients, dtype=np.int64)  # per attempt and Gauss-Markov
        self.uniforms = KeyedUniforms(rngs, self.prefix)

    def gain(self, client: int, t_s: float) -> float:
        """|h|^2 (mean 1) of ``client`` at ``t_s``."""
        return self._power(self.scattered(client, t_s))

    def scattered(self, client: int, t_s: float) -> complex:
        """The scattered part s of ``client``'s gain at ``t_s`` (advancing its state)."""
        if self.doppler_hz is not None:
            return self._gauss_markov(client, t_s)
        if self.coherence_s > 0:
            window = int(math.floor(t_s / self.coherence_s + WINDOW_SLACK))
            if window != self.window[client]:
                self.window[client] = window
                self.s[client] = _complex_normal(*self.uniforms.draw_one(client, window, 2))
            return complex(self.s[client])
        return self._fresh(client)

    def _gauss_markov(self, client: int, t_s: float) -> complex:
        assert self.doppler_hz is not None
        last = float(self.t_last_s[client])
        if t_s == last:  # a second query at the same instant sees the same gain
            return complex(self.s[client])
        w = self._fresh(client)
        if math.isnan(last):
            s = w
        else:
            rho = jakes_rho(self.doppler_hz, abs(t_s - last))
            s = rho * complex(self.s[client]) + math.sqrt(max(0.0, 1.0 - rho * rho)) * w
        self.t_last_s[client], self.s[client] = t_s, s
        return s

    def _power(self, s: complex) -> float:
        h = self.los + self.scatter * s
        return h.real * h.real + h.imag * h.imag

    def _fresh(self, client: int) -> complex:
        """The client's next draw of w (its n-th: addressed by client and count)."""
        index = int(self.n_draws[client])
        self.n_draws[client] = index + 1
        return _complex_normal(*self.uniforms.draw_one(client, index, 2))


# each fading law's gains, built as ``impl(cfg, direction, rngs, n_clients)``
# (``simfl.register`` adds more)
implements(NoFading, lambda cfg, direction, rngs, n_clients: UnitGain())
implements(RayleighFading, FadingProcess)
implements(RicianFading, FadingProcess)


def build_fading(cfg: Fading, direction: str, rngs: RngTree, n_clients: int) -> FadingGains:
    """The fading gains of ``direction`` for ``cfg`` (unit gains for ``none``)."""
    gains: FadingGains = implementation_of(cfg, "network.radio.fading.kind")(
        cfg, direction, rngs, n_clients)
    return gains
