"""Power drawn by a device in each state of its round work (idle, rx, compute, tx).

The states' powers come from :class:`simfl.core.config.energy.Energy`: a fixed power,
or for the radio an energy per bit, which spreads a transfer's energy over its airtime
(an instantaneous transfer costs its energy as a lump instead).
"""

from __future__ import annotations

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

    @property
    def idle_w(self) -> float:
        return self.energy.idle_w

    def state_w(self, state: str, n_bits: float = 0.0,
                airtime_s: float = 0.0) -> tuple[float, float | None]:
        """Power drawn in ``state`` (``idle``, ``compute``, ``rx``, ``tx``), and the lump of
        energy an instantaneous per-bit transfer of ``n_bits`` costs at once (else None)."""
        e = self.energy
        if state == "compute":
            return e.compute_w, None
        if state == "idle":  # at work but waiting (e.g. for medium access)
            return e.idle_w, None
        watts, per_bit = (e.tx_w, e.tx_j_per_bit) if state == "tx" else (e.rx_w, e.rx_j_per_bit)
        if watts is not None:
            return watts, None
        assert per_bit is not None, "Energy sets one of each state's pair"
        if airtime_s > 0:
            return n_bits * per_bit / airtime_s, None
        return 0.0, n_bits * per_bit

    def spread_w(self, power_w: float, airtime_s: float, wall_s: float) -> float:
        """Average power over ``wall_s`` of ``airtime_s`` at ``power_w`` and idle power for
        the rest (``power_w`` is 0 when the transfer was charged as a lump)."""
        if wall_s <= 0:
            return power_w
        energy_j = power_w * airtime_s + self.energy.idle_w * max(wall_s - airtime_s, 0.0)
        return energy_j / wall_s

    def contention_w(self) -> float:
        """Power of a contention transmission: ``tx_w``, or with ``tx_j_per_bit`` the bits
        that the uplink's nominal ``tx_rate_bps`` carries per second."""
        e = self.energy
        if e.tx_w is not None:
            return e.tx_w
        assert e.tx_j_per_bit is not None, "Energy sets tx_w or tx_j_per_bit"
        return e.tx_j_per_bit * self.tx_rate_bps
