"""Link rates: how fast a link carries bits (a fixed rate, or Shannon capacity of the SNR)."""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.checks import finite, positive, require
from simfl.core.config.node import Choice


@dataclass(frozen=True)
class Rate(Choice, point="rates"):
    """How fast a link carries bits."""


@dataclass(frozen=True)
class FixedRate(Rate):
    """A constant bit rate."""

    kind = "fixed"
    infinite_ok = ("rate_bps",)  # an infinite rate: transfers take no airtime
    rate_bps: float = 1e6

    def validate(self) -> None:
        positive(self, "rate_bps")


@dataclass(frozen=True)
class ShannonRate(Rate):
    """Shannon capacity of each attempt's SNR: efficiency * bandwidth_hz * log2(1 + SNR).

    The SNR is that of the attempt's channel draw (block fading: one SNR per attempt,
    constant during it), so a fading channel's airtime varies from attempt to attempt
    and the loss decision and the airtime come from the same draw. A channel that draws
    no SNR (ideal, erasure, the Gilbert-Elliott kinds) uses ``snr_db`` instead, shifted per
    client by the channel's ``distance`` if set; fading channels ignore ``snr_db``.
    ``efficiency`` (0 < efficiency <= 1) is the fraction of capacity reached in
    practice (about 0.5 to 0.8 on real links). Not modelled: modulation and coding
    levels, headers, acknowledgements, TCP dynamics, interference.
    """

    kind = "shannon"
    paper = ("Shannon, A Mathematical Theory of Communication, Bell System Technical "
             "Journal 27, 1948")
    bandwidth_hz: float = 1e6
    efficiency: float = 1.0
    snr_db: float = 10.0

    def validate(self) -> None:
        positive(self, "bandwidth_hz", "efficiency")
        require(self.efficiency <= 1.0, "efficiency", self.efficiency, "a number in (0, 1]")
        finite(self, "bandwidth_hz", "snr_db")
