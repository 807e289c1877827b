"""Uplink inter-cell interference in the shared band, on average over its resource blocks.

Every cell reuses the whole band (frequency reuse 1) and an upload lands on blocks at
random positions, so on average an upload j of another cell spreads its received power
over the whole band: toward access point c it adds ``P_j g_jc / B`` to the noise
density ``N0`` there. An upload of client i in cell c then sees ``a_i / (1 + I_c/N0)``
in place of its ``a_i = P_i g_i / N0``, with

``I_c / N0 = sum_j (a_j / B) 10^((g_jc - g_j) / 10)``

over the uploads j active in the other cells (``g`` in dB; ``a_j / 10^(g_j/10)`` is
``P_j / N0``, so a round policy's transmit powers carry over). The noise rise of every
cell changes whenever an upload starts or ends in any cell; the band then recomputes
every cell's rates. With frequency reuse 3 (three sectors per site, listed site by
site) sector s of every site uses the third s of the band: only the uploads of cells
with the same index modulo 3 interfere, and ``B`` is the third.
"""

from __future__ import annotations

import numpy as np

from simfl.sim.radio.radio_map import RadioMap


class CellInterference:
    """The noise rise ``1 + I_c/N0`` of each cell from the uploads of the others, with
    the gains toward each access point read once per client and round."""

    def __init__(self, radio: RadioMap, reuse: int = 1) -> None:
        self.radio, self.reuse = radio, reuse
        self._toward: dict[int, np.ndarray] = {}  # ap -> gain (dB) of each client, NaN: unread

    def new_round(self) -> None:
        """Forget the gains read (clients may have moved since)."""
        self._toward = {}

    def gains_db(self, ap: int, clients: np.ndarray) -> np.ndarray:
        """Mean path gain (dB) of ``clients`` toward access point ``ap``."""
        known = self._toward.get(ap)
        if known is None:
            known = self._toward[ap] = np.full(self.radio.n_clients, np.nan)
        unread = clients[np.isnan(known[clients])]
        if unread.size:
            known[unread] = self.radio.gain_toward_db(ap, unread)
        return np.asarray(known[clients])

    def rises(self, cells: dict[int, np.ndarray], a_hz: np.ndarray,
              band_hz: float) -> dict[int, float]:
        """``1 + I_c/N0`` of each cell c of ``cells`` (cell -> its active uploads' clients),
        given each client's received power over the noise density ``a_hz``."""
        keys = [key for key, clients in cells.items() if clients.size]
        if not keys:
            return {}
        clients = np.concatenate([cells[key] for key in keys])
        home = np.repeat(np.asarray(keys), [cells[key].size for key in keys])
        a = np.asarray(a_hz[clients], dtype=float)
        loud = a > 0  # silent clients interfere with no one
        out = {}
        for key in keys:
            other = (home != key) & loud & (home % self.reuse == key % self.reuse)
            if not other.any():
                out[key] = 1.0
                continue
            j = clients[other]
            ratio = 10.0 ** ((self.gains_db(key, j) - self.radio.gain_db[j]) / 10.0)
            out[key] = 1.0 + float(np.sum(a[other] / band_hz * ratio))
        return out
