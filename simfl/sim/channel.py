"""Link loss models: each transfer attempt either arrives or is lost.

``Link.transmit`` is the public template (airtime from the bit rate, then the loss
decision); kinds override only the private ``_lost`` hook. Losses are decided per
whole-update attempt, not per packet; ARQ (retrying) is the device's business.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simfl.core.config import Channel, ErasureChannel, IdealChannel


@dataclass(frozen=True)
class Delivery:
    ok: bool
    airtime_s: float


class Link:
    """An ideal link: every attempt arrives after ``n_bytes * 8 / rate_bps`` seconds."""

    def __init__(self, cfg: Channel) -> None:
        self.cfg = cfg
        self.rate_bps = cfg.rate.rate_bps

    def transmit(self, t_s: float, n_bytes: int, rng: np.random.Generator) -> Delivery:
        airtime_s = n_bytes * 8.0 / self.rate_bps
        return Delivery(ok=not self._lost(t_s, rng), airtime_s=airtime_s)

    def _lost(self, t_s: float, rng: np.random.Generator) -> bool:
        return False


class ErasureLink(Link):
    """Each attempt is lost independently with probability ``p``."""

    def _lost(self, t_s: float, rng: np.random.Generator) -> bool:
        return bool(rng.random() < self.cfg.p)


_LINKS = {IdealChannel: Link, ErasureChannel: ErasureLink}


def build_link(cfg: Channel) -> Link:
    return _LINKS[type(cfg)](cfg)
