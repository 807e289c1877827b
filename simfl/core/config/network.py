"""The network between clients and server: links, channels, rates, MAC and ARQ."""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.node import Choice, Node, positive, probability, require


@dataclass(frozen=True)
class Rate(Choice, point="rates"):
    """How fast a link carries bits."""


@dataclass(frozen=True)
class FixedRate(Rate):
    """A constant bit rate."""

    kind = "fixed"
    rate_bps: float = 1e6

    def validate(self) -> None:
        positive(self, "rate_bps")


@dataclass(frozen=True)
class Channel(Choice, point="channels"):
    """A link's loss model; every kind carries its bit ``rate``."""

    rate: Rate = FixedRate()


@dataclass(frozen=True)
class IdealChannel(Channel):
    """Every transfer arrives; the only cost is its airtime."""

    kind = "ideal"


@dataclass(frozen=True)
class ErasureChannel(Channel):
    """Each transfer attempt is lost independently with probability ``p``."""

    kind = "erasure"
    p: float = 0.1

    def validate(self) -> None:
        probability(self, "p")


@dataclass(frozen=True)
class Mac(Choice, point="macs"):
    """Medium access between the clients and the server."""


@dataclass(frozen=True)
class IdealMac(Mac):
    """No contention: every client has its own link."""

    kind = "ideal"


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
