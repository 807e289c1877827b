"""Where every client is and how strongly each access point hears it: a flat record.

The :class:`RadioMap` is what the rest of the simulation reads of the geometry: the links
(mean SNR of an attempt), the shared band (each client's spectral efficiency), slotted
ALOHA's capture (received powers in a busy slot) and the recorder (clients.csv). It is
built once per run from the placement, the cells and the radio, and moved in place by
mobility (positions, gains and association change; nothing else holds a copy).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

#: mean path gain (dB) toward access point ``ap`` of clients at (x_m, y_m):
#: ``gains(ap, x_m, y_m, clients)``
GainsToward = Callable[[int, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def dbm_to_w(dbm: np.ndarray | float) -> np.ndarray | float:
    return 10.0 ** ((np.asarray(dbm) - 30.0) / 10.0)


@dataclass
class RadioMap:
    """Positions, association and mean path gains of ``n`` clients toward ``n_ap`` access
    points (arrays indexed by client id).

    Attributes
    ----------
    x_m, y_m:
        Client positions (m), shape (n,).
    ap_xy_m:
        Access point positions (m), shape (n_ap, 2).
    ap:
        Index of the access point serving each client, shape (n,).
    gain_db:
        Mean path gain of each client toward its serving access point, in dB (minus the
        path loss and the shadowing), shape (n,).
    tx_power_dbm:
        Each client's transmit power after power control, shape (n,); ``-inf`` for a
        client that truncated power control silences.
    noise_dbm:
        Noise power over the whole band (dBm).
    bandwidth_hz:
        The band's width (Hz).
    ap_tx_power_dbm:
        The access points' transmit power on the downlink (dBm).
    gains_toward:
        Mean path gain (dB) of clients toward any access point (the propagation's, with
        wraparound and sector antennas), or None: only the serving gains are known.
    """

    x_m: np.ndarray
    y_m: np.ndarray
    ap_xy_m: np.ndarray
    ap: np.ndarray
    gain_db: np.ndarray
    tx_power_dbm: np.ndarray
    noise_dbm: float
    bandwidth_hz: float
    ap_tx_power_dbm: float
    gains_toward: GainsToward | None = field(default=None, repr=False, compare=False)

    @property
    def n_clients(self) -> int:
        return int(self.x_m.shape[0])

    def mean_snr_db(self, clients: np.ndarray | int | slice = slice(None)) -> np.ndarray:
        """Uplink mean SNR over the whole band, in dB (no fading)."""
        return np.asarray(self.tx_power_dbm[clients] + self.gain_db[clients] - self.noise_dbm)

    def client_tx_power_dbm(self, client: int) -> float:
        """``client``'s transmit power now (dBm; ``-inf``: silent)."""
        return float(self.tx_power_dbm[client])

    def downlink_mean_snr_db(self, clients: np.ndarray | int | slice = slice(None)
                             ) -> np.ndarray:
        """Downlink mean SNR over the whole band, in dB (the serving access point's power)."""
        return np.asarray(self.ap_tx_power_dbm + self.gain_db[clients] - self.noise_dbm)

    def rx_power_w(self, clients: np.ndarray | int | slice = slice(None)) -> np.ndarray:
        """Mean power (W) that each client's serving access point receives from it."""
        return np.asarray(dbm_to_w(self.tx_power_dbm[clients] + self.gain_db[clients]))

    def gain_toward_db(self, ap: int, clients: np.ndarray) -> np.ndarray:
        """Mean path gain (dB) of ``clients`` toward access point ``ap`` at their current
        positions (their serving gain where ``ap`` serves them)."""
        assert self.gains_toward is not None, "gains toward other cells need the propagation"
        gain = np.asarray(self.gains_toward(ap, self.x_m[clients], self.y_m[clients], clients),
                          dtype=float)
        return np.where(self.ap[clients] == ap, self.gain_db[clients], gain)

    @property
    def noise_w(self) -> float:
        return float(dbm_to_w(self.noise_dbm))

    def columns(self, clients: np.ndarray) -> dict[str, np.ndarray]:
        """clients.csv's columns for ``clients``: position, access point, mean uplink SNR."""
        return {"x_m": self.x_m[clients], "y_m": self.y_m[clients], "ap": self.ap[clients],
                "mean_snr_db": self.mean_snr_db(clients)}


def client_table(energy_table: dict[str, np.ndarray],
                 radio_map: RadioMap | None) -> dict[str, np.ndarray]:
    """clients.csv: the energy source's per-client records, with each client's position,
    access point and mean SNR when there is a radio."""
    if radio_map is None:
        return energy_table
    return {**energy_table, **radio_map.columns(np.asarray(energy_table["client"], dtype=int))}
