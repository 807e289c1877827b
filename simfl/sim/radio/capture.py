"""What a MAC reads of the shared radio, and the capture of a busy slot by its strongest.

In a busy slot every transmitter on a channel interferes with every other on it. An
access point decodes the strongest transmitter of its own cell on a channel when its
SINR, ``P_k g_k h_k / (N + sum_{j != k} P_j g_jk h_j)``, is at least the threshold; the
sum runs over every other transmitter on the channel, those of other cells included
(their gain toward this access point from the path loss over their distance, without
shadowing). ``h`` is one Rayleigh power gain per transmitter and slot when the radio's
fading is ``rayleigh``, else 1. Without a radio map every transmitter is received at the
same mean power and there is no noise (one cell): the SIR alone decides. A receiver
decodes at most one upload per channel and slot.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simfl.core.config.network import Network
from simfl.core.config.radio import PathLoss
from simfl.core.config.fading import RayleighFading
from simfl.sim.radio.propagation import path_loss_db
from simfl.sim.radio.radio_map import RadioMap, dbm_to_w


@dataclass(frozen=True)
class Air:
    """The shared radio as the MACs see it: the map (or None), the SINR threshold (dB, or
    None: collisions are losses), the path loss (for gains toward other cells) and
    whether slots draw Rayleigh fading."""

    radio_map: RadioMap | None = None
    sinr_threshold_db: float | None = None
    path_loss: PathLoss | None = None
    rayleigh: bool = False


def air_of(network: Network, radio_map: RadioMap | None) -> Air | None:
    """The :class:`Air` of ``network`` with ``radio_map``; None when there is nothing to read."""
    if radio_map is None and network.sinr_threshold_db is None:
        return None
    radio = network.radio
    return Air(radio_map, network.sinr_threshold_db,
               None if radio is None else radio.path_loss,
               radio is not None and isinstance(radio.fading, RayleighFading))


class Capture:
    """Who captures each channel of a busy slot (see the module docstring)."""

    def __init__(self, air: Air, n_clients: int) -> None:
        assert air.sinr_threshold_db is not None, "capture needs a threshold"
        self.theta = float(10.0 ** (air.sinr_threshold_db / 10.0))
        self.rayleigh = air.rayleigh
        self.map, self.path_loss = air.radio_map, air.path_loss
        if self.map is None:
            self.rx_w, self.noise_w = np.ones(n_clients), 0.0
            self.ap = np.zeros(n_clients, dtype=np.int64)
        else:
            self.rx_w, self.noise_w = self.map.rx_power_w(), self.map.noise_w
            self.ap = np.asarray(self.map.ap, dtype=np.int64)

    def won(self, tx: np.ndarray, picks: np.ndarray | None,
            rng: np.random.Generator) -> np.ndarray:
        """Which of ``tx`` (sorted ids, on channels ``picks``, or all on one) get through."""
        h = rng.standard_exponential(tx.size) if self.rayleigh else np.ones(tx.size)
        channel = np.zeros(tx.size, dtype=np.int64) if picks is None else picks
        won = np.zeros(tx.size, dtype=bool)
        for ch in np.unique(channel):
            on = np.flatnonzero(channel == ch)
            for ap in np.unique(self.ap[tx[on]]):
                power = self._received_w(tx[on], int(ap)) * h[on]
                own = np.flatnonzero(self.ap[tx[on]] == ap)
                best = own[int(np.argmax(power[own]))]
                with np.errstate(divide="ignore", invalid="ignore"):
                    sinr = power[best] / (self.noise_w + power.sum() - power[best])
                won[on[best]] = bool(sinr >= self.theta)
        return won

    def _received_w(self, clients: np.ndarray, ap: int) -> np.ndarray:
        """Mean power (W) that access point ``ap`` receives from each of ``clients``."""
        power: np.ndarray = np.array(self.rx_w[clients], dtype=float)
        other = self.ap[clients] != ap
        if other.any():
            m = self.map
            assert m is not None and self.path_loss is not None, "cells need a radio"
            far = clients[other]
            d_m = np.hypot(m.x_m[far] - m.ap_xy_m[ap, 0], m.y_m[far] - m.ap_xy_m[ap, 1])
            power[other] = dbm_to_w(m.tx_power_dbm[far] - path_loss_db(self.path_loss, d_m))
        return power
