"""Power drawn by a device in each state of its round work (idle, rx, compute, tx).

The states' powers come from :class:`simfl.core.config.energy.Energy`: a fixed power,
or for the radio an energy per bit. An energy per bit is the energy of a bit sent at
the link's full rate: the radio then draws J/bit x the attempt's full rate (its bits
over its airtime) whenever it is on, so the two ways of giving the radio's power price
the same transfer alike, also when a MAC keeps the radio on longer than the airtime
(an instantaneous transfer costs its energy as a lump instead).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from simfl.core.config.energy import Energy


class PowerModel:
    """Per-state power of every device.

    Parameters
    ----------
    energy:
        Power (or energy per bit) of each state.
    tx_rate_bps:
        Nominal uplink bit rate: prices contention transmissions when energy is per bit.
    """

    def __init__(self, energy: Energy, tx_rate_bps: float = 0.0) -> None:
        self.energy = energy
        self.tx_rate_bps = tx_rate_bps
        #: each client's computing power (W) when it differs by client (DVFS: kappa f^3,
        #: ``population.compute.cpu_hz``); None: ``energy.compute_w`` for every client
        self.compute_w_by_client: np.ndarray | None = None
        #: with ``energy.amplifier``: a client's radiated power now (dBm; ``-inf``: silent),
        #: read at each transmission (the shared radio's power after power control)
        self.radiated_dbm: Callable[[int], float] | None = None

    @property
    def idle_w(self) -> float:
        return self.energy.idle_w

    def amplifier_w(self, client: int | None) -> float:
        """What ``client``'s transmitter draws under ``energy.amplifier``: circuit power
        plus its radiated power over the amplifier's efficiency."""
        amplifier = self.energy.amplifier
        assert amplifier is not None and self.radiated_dbm is not None and client is not None, \
            "an amplifier prices one client's transmission from the radio's power"
        dbm = self.radiated_dbm(client)
        return amplifier.draw_w(10.0 ** ((dbm - 30.0) / 10.0) if dbm > -math.inf else 0.0)

    def state_w(self, state: str, n_bits: float = 0.0, airtime_s: float = 0.0,
                client: int | None = None) -> tuple[float, float | None]:
        """Power drawn in ``state`` (``idle``, ``compute``, ``rx``, ``tx``), and the lump of
        energy an instantaneous per-bit transfer of ``n_bits`` costs at once (else None).
        ``airtime_s`` is the transfer's airtime at the link's full rate: a per-bit radio
        draws the bits' energy over it, J/bit x that rate. With an amplifier the transmit
        power is ``client``'s own (:meth:`amplifier_w`)."""
        e = self.energy
        if state == "compute":
            return e.compute_w, None
        if state == "idle":  # at work but waiting (e.g. for medium access)
            return e.idle_w, None
        if state == "tx" and e.amplifier is not None:
            return self.amplifier_w(client), None
        watts, per_bit = (e.tx_w, e.tx_j_per_bit) if state == "tx" else (e.rx_w, e.rx_j_per_bit)
        if watts is not None:
            return watts, None
        assert per_bit is not None, "Energy sets one of each state's pair"
        if airtime_s > 0:
            return n_bits * per_bit / airtime_s, None
        return 0.0, n_bits * per_bit

    def contention_w(self, client: int | None = None) -> float:
        """Power of a contention transmission: ``tx_w``, or with ``tx_j_per_bit`` the bits
        that the uplink's nominal ``tx_rate_bps`` carries per second, or with an
        amplifier ``client``'s draw."""
        e = self.energy
        if e.amplifier is not None:
            return self.amplifier_w(client)
        if e.tx_w is not None:
            return e.tx_w
        assert e.tx_j_per_bit is not None, "Energy sets tx_w or tx_j_per_bit"
        return e.tx_j_per_bit * self.tx_rate_bps

    def contention_extra_w(self, client: int | None = None) -> float:
        """What a contention transmission adds to the idle power of a contending device:
        for the slot it transmits in, it draws :meth:`contention_w` instead of ``idle_w``."""
        return self.contention_w(client) - self.energy.idle_w
