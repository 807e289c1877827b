"""The network between clients and server: links, channels, rates, MAC and ARQ.

:class:`Network` holds the two links and the MAC. The kinds it is built from have their
own modules, :mod:`~simfl.core.config.rate`, :mod:`~simfl.core.config.channel` and
:mod:`~simfl.core.config.mac`, and are importable from here too.
"""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.channel import (Channel, ContinuousGilbertElliottChannel, Distance,
                                       ErasureChannel, GilbertElliottChannel,
                                       IdealChannel, RayleighChannel)
from simfl.core.config.checks import positive, require
from simfl.core.config.mac import (MAX_SLOT_S, MAX_WINDOW, MIN_ACCESS_PROB, MIN_SLOT_S, IdealMac,
                                   Mac, RelayMac, SlottedAlohaMac, TdmaMac)
from simfl.core.config.node import Node
from simfl.core.config.rate import FixedRate, Rate, ShannonRate

__all__ = [
    "Rate", "FixedRate", "ShannonRate",
    "Distance", "Channel", "IdealChannel", "ErasureChannel", "GilbertElliottChannel",
    "ContinuousGilbertElliottChannel", "RayleighChannel",
    "Mac", "IdealMac", "TdmaMac", "SlottedAlohaMac", "RelayMac",
    "MIN_SLOT_S", "MAX_SLOT_S", "MIN_ACCESS_PROB", "MAX_WINDOW",
    "Network",
]


@dataclass(frozen=True)
class Network(Node):
    """Downlink (server to client) and uplink (client to server) with ARQ.

    A transfer is tried up to ``arq_max_attempts`` times, back to back; each attempt
    costs the full airtime ``model_bytes * 8 / rate_bps``. ``model_bytes`` defaults to
    the model's float32 parameter size.
    """

    uplink: Channel = IdealChannel()
    downlink: Channel = IdealChannel(rate=FixedRate(rate_bps=10e6))
    mac: Mac = IdealMac()
    arq_max_attempts: int = 1
    model_bytes: int | None = None

    def validate(self) -> None:
        require(self.arq_max_attempts >= 1, "arq_max_attempts", self.arq_max_attempts,
                "an integer >= 1")
        positive(self, "model_bytes")
