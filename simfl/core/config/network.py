"""The network between clients and server: links, channels, rates, MAC and ARQ.

:class:`Network` holds the two links and the MAC. The kinds it is built from have their
own modules, :mod:`~simfl.core.config.rate`, :mod:`~simfl.core.config.channel` and
:mod:`~simfl.core.config.mac` (with :mod:`~simfl.core.config.csma`), and are importable
from here too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from simfl.core.config.channel import (Channel, ContinuousGilbertElliottChannel, Distance,
                                       ErasureChannel, GilbertElliottChannel,
                                       IdealChannel, RayleighChannel)
from simfl.core.config.checks import finite, positive, require
from simfl.core.config.csma import CsmaCaMac
from simfl.core.config.mac import (MAX_SLOT_S, MAX_WINDOW, MIN_ACCESS_PROB, MIN_SLOT_S, IdealMac,
                                   Mac, OfdmaMac, RelayMac, SlottedAlohaMac, TdmaMac)
from simfl.core.config.node import Node
from simfl.core.config.cells import Cells
from simfl.core.config.radio import Radio
from simfl.core.config.rate import FixedRate, Rate, ShannonRate

__all__ = [
    "Rate", "FixedRate", "ShannonRate",
    "Distance", "Channel", "IdealChannel", "ErasureChannel", "GilbertElliottChannel",
    "ContinuousGilbertElliottChannel", "RayleighChannel",
    "Mac", "IdealMac", "TdmaMac", "SlottedAlohaMac", "RelayMac", "OfdmaMac", "CsmaCaMac",
    "MIN_SLOT_S", "MAX_SLOT_S", "MIN_ACCESS_PROB", "MAX_WINDOW",
    "Network",
]


#: most attempts of one transfer: each is an event of the simulation (real link layers
#: stop after a handful)
MAX_ARQ_ATTEMPTS = 1000


@dataclass(frozen=True)
class Network(Node):
    """Downlink (server to client) and uplink (client to server) with ARQ.

    A transfer is tried up to ``arq_max_attempts`` times (at most 1000,
    :data:`MAX_ARQ_ATTEMPTS`), back to back; each attempt
    costs the full airtime ``model_bytes * 8 / rate_bps``. ``model_bytes`` defaults to
    the model's float32 parameter size.

    The shared radio (``radio``, with ``cells`` and ``population.placement``) gives every
    link its mean SNR from geometry, and with it each attempt's rate (the band's capacity)
    and loss; the two channels must then be ``ideal`` and their ``rate`` is not used. ``sinr_threshold_db`` is the SINR an attempt needs to
    get through (and, in slotted ALOHA, lets the strongest of a busy slot capture it);
    null keeps every collision a loss; without a radio it is allowed only with slotted ALOHA.
    ``downlink_mode`` sends the global model to each
    client on its own (``unicast``) or once to all (``broadcast``).
    """

    uplink: Channel = IdealChannel()
    downlink: Channel = IdealChannel(rate=FixedRate(rate_bps=10e6))
    mac: Mac = IdealMac()
    arq_max_attempts: int = 1
    model_bytes: int | None = None
    cells: Cells = Cells()
    radio: Radio | None = None
    sinr_threshold_db: float | None = None
    downlink_mode: Literal["unicast", "broadcast"] = "unicast"

    def validate(self) -> None:
        self.mac.check_in(self)
        require(1 <= self.arq_max_attempts <= MAX_ARQ_ATTEMPTS, "arq_max_attempts",
                self.arq_max_attempts, f"an integer in [1, {MAX_ARQ_ATTEMPTS}] (every "
                "attempt is simulated, back to back)")
        _sinr_in_range(self.sinr_threshold_db)
        positive(self, "model_bytes")
        finite(self, "sinr_threshold_db")
        # without a radio only slotted ALOHA reads the threshold (capture by the strongest)
        require(self.sinr_threshold_db is None or self.radio is not None
                or isinstance(self.mac, SlottedAlohaMac), "sinr_threshold_db",
                self.sinr_threshold_db, "null unless network.radio is set or network.mac is "
                "slotted_aloha (nothing else reads an SINR threshold)")
        if self.radio is not None:
            for name in ("uplink", "downlink"):
                channel = getattr(self, name)
                require(channel.kind == "ideal", f"{name}.kind", channel.kind, "ideal when "
                        "network.radio is set (the radio decides each attempt's rate and loss)")
                require(channel.distance is None, f"{name}.distance",
                        channel.distance and channel.distance.to_dict(), "null when "
                        "network.radio is set (positions come from population.placement)")


#: the SINR thresholds an attempt may need (dB): beyond, 10^(dB/10) leaves the floats
MAX_SINR_DB = 200.0


def _sinr_in_range(sinr_db: float | None) -> None:
    if sinr_db is not None and math.isfinite(sinr_db):
        require(abs(sinr_db) <= MAX_SINR_DB, "sinr_threshold_db", sinr_db,
                f"null or a threshold in [-{MAX_SINR_DB:g}, {MAX_SINR_DB:g}] dB")
