"""The global model sent once to all of a round's clients (``network.downlink_mode``).

One transmission reaches every client that starts the round. Its rate is the one the
weakest of them can decode at its mean downlink SNR, ``B log2(1 + min_k SNR_k)`` (from the
radio map), or without a radio map the downlink's configured rate; so every client's
download ends ``bits / rate`` after the round opens. The reception is not lost (the rate
is chosen for the weakest; fast fading and the downlink's loss model are not applied).
"""

from __future__ import annotations

import math

import numpy as np

from simfl.sim.radio.radio_map import RadioMap


class Broadcast:
    """Download time of a broadcast of ``n_bytes`` at ``rate_bps`` (no radio map) or at
    the rate of the weakest client of ``radio_map``."""

    def __init__(self, n_bytes: int, rate_bps: float, radio_map: RadioMap | None) -> None:
        self.n_bytes, self.rate_bps, self.radio_map = n_bytes, rate_bps, radio_map

    def rate_for_bps(self, clients: np.ndarray) -> float:
        """The common rate (bit/s) that every one of ``clients`` decodes."""
        m = self.radio_map
        if m is None or len(clients) == 0:
            return self.rate_bps
        weakest_db = float(np.min(m.downlink_mean_snr_db(np.asarray(clients, dtype=np.int64))))
        return float(m.bandwidth_hz) * math.log2(1.0 + 10.0 ** (weakest_db / 10.0))

    def duration_s(self, clients: np.ndarray) -> float:
        """Seconds from the round's opening to the end of every one's download."""
        rate = self.rate_for_bps(clients)
        return 8.0 * self.n_bytes / rate if rate > 0 else math.inf
