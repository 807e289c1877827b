"""A link whose attempts see the shared radio: mean SNR from geometry, times fading.

With ``network.radio`` set both directions are radio links. An attempt of client i at
time t sees SNR_i(t) = mean_snr_i * g_i(t): the uplink's mean SNR is the client's power
toward its access point (the downlink's, the access point's power toward the client)
over the band's noise, and g_i(t) is the fading power gain of that client and direction
(:mod:`simfl.sim.radio.fading`; 1 without fading). With a threshold theta
(``network.sinr_threshold_db``) the link's rates span [R(theta), inf), R(x) =
``bandwidth_hz * log2(1 + x)``: an attempt whose SNR clears theta runs at R(SNR); one in
outage (SNR < theta) is sent at the lowest rate, R(theta), and is lost, so it lasts
bits / R(theta) however deep the fade (the rule of the private ``rayleigh`` channel).
Without a threshold every attempt arrives, at R(SNR). A client that truncated power control
silences sends nothing: each of its attempts is lost at once. Under a shared MAC the
band is split among uploads by the MAC (:mod:`simfl.sim.mac`); interference is the
MAC's business too (capture in slotted ALOHA).

This is the ``shannon`` kind of ``network.radio.link``; :func:`build_radio_link` builds
the kind a scenario names (``nr``: :mod:`simfl.sim.radio.nr_link`).
"""

from __future__ import annotations

import itertools
import math
from typing import Iterable, Protocol, Sequence

import numpy as np

from simfl.core.config.mac import OFF_CLOCK, PROCESS
from simfl.core.config.network import Channel
from simfl.core.config.radio_link import NrLink, RadioLinkModel, ShannonLink
from simfl.core.registry import implementation_of, implements
from simfl.core.rng import RngTree
from simfl.sim.links.channel import Link, db_to_linear
from simfl.sim.radio.radio_map import RadioMap


class FadingGains(Protocol):
    """The fading power gain of a client's attempts in one direction, with memory."""

    draws: bool

    def gain(self, client: int, t_s: float) -> float:
        """|h|^2 (mean 1) of ``client`` at ``t_s``."""


class UnitGain:
    """No fading: every attempt sees its mean SNR."""

    draws = False

    def gain(self, client: int, t_s: float) -> float:
        return 1.0


class RadioLink(Link):
    """One direction (``uplink`` or ``downlink``) of the shared radio (module docstring).

    Rounds over it run on processes, or off the clock (:mod:`simfl.sim.rounds.placed`)
    where no attempt can be lost: no SINR threshold and, on the uplink, no client that
    power control silences.
    """

    engines = frozenset({PROCESS, OFF_CLOCK})
    airtime_by_client = True

    def __init__(self, cfg: Channel, radio_map: RadioMap, direction: str,
                 fading: FadingGains | None = None, sinr_threshold_db: float | None = None,
                 rngs: RngTree | None = None) -> None:
        super().__init__(cfg, rngs)
        self.radio_map, self.direction = radio_map, direction
        self.fading: FadingGains = fading if fading is not None else UnitGain()
        self.threshold = None if sinr_threshold_db is None else db_to_linear(sinr_threshold_db)

    def round_engines(self, cohort: bool = False) -> frozenset[str]:
        """Off the clock only while every attempt arrives (see the class docstring)."""
        engines = super().round_engines(cohort)
        if self.threshold is not None or (self.direction == "uplink" and bool(
                np.isneginf(self.radio_map.tx_power_dbm).any())):
            return engines - {OFF_CLOCK}
        return engines

    @property
    def time_varying(self) -> bool:
        """Whether an attempt's airtime depends on when it starts (fading)."""
        return self.fading.draws

    def airtimes_s(self, clients: np.ndarray, n_bytes: int,
                   t_s: float | Sequence[float]) -> list[float]:
        """The airtime of an attempt of ``n_bytes`` of each of ``clients`` that starts at
        ``t_s`` (one time, or one per client): the numbers :meth:`transmit` gives, client
        by client (its fading state advanced the same way), the mean SNRs read at once."""
        radio_map = self.radio_map
        snr_db = (radio_map.mean_snr_db(clients) if self.direction == "uplink"
                  else radio_map.downlink_mean_snr_db(clients)).tolist()
        bits, rate_bps = n_bytes * 8.0, self._rate_bps
        times = itertools.repeat(t_s) if isinstance(t_s, float) else t_s
        gains: Iterable[float] = ((self.fading.gain(c, t) for c, t in zip(clients.tolist(), times))
                                  if self.time_varying else itertools.repeat(1.0))
        airtimes = []
        for db, gain in zip(snr_db, gains):
            rate = rate_bps(float(10.0 ** (db / 10.0)) * gain)
            airtimes.append(bits / rate if rate > 0 else math.inf)
        return airtimes

    def mean_snr(self, client: int) -> float:
        """The linear mean SNR of ``client`` over the whole band in this direction."""
        radio_map = self.radio_map
        if self.direction == "uplink":
            return float(10.0 ** (radio_map.mean_snr_db(client) / 10.0))
        return float(10.0 ** (radio_map.downlink_mean_snr_db(client) / 10.0))

    def mean_rate_bps(self, client: int) -> float:
        """The rate of ``client`` over the whole band at its mean SNR, B log2(1 + SNR)."""
        return self.radio_map.bandwidth_hz * math.log2(1.0 + self.mean_snr(client))

    def _snr(self, t_s: float, client: int, rng: np.random.Generator | None) -> float:
        return self.mean_snr(client) * self.fading.gain(client, t_s)

    def _rate_bps(self, snr: float | None) -> float:
        assert snr is not None, "a radio link draws an SNR"
        if snr <= 0:
            return math.inf  # a silenced client: lost at once
        threshold = self.threshold
        rate_snr = snr if threshold is None else max(snr, threshold)  # outage: sent at R(theta)
        return self.radio_map.bandwidth_hz * math.log2(1.0 + rate_snr)

    def _lost(self, t_s: float, airtime_s: float, snr: float | None, client: int,
              rng: np.random.Generator | None) -> bool:
        assert snr is not None, "a radio link draws an SNR"
        return snr == 0.0 or (self.threshold is not None and snr < self.threshold)


def _shannon_link(model: RadioLinkModel, channel: Channel, radio_map: RadioMap, direction: str,
                  fading: FadingGains | None, sinr_threshold_db: float | None,
                  rngs: RngTree | None) -> RadioLink:
    return RadioLink(channel, radio_map, direction, fading, sinr_threshold_db, rngs)


# the RadioLink of each kind of ``network.radio.link``, built as ``impl(model, channel,
# radio_map, direction, fading, sinr_threshold_db, rngs)`` (``simfl.register`` adds more)
implements(ShannonLink, _shannon_link)
implements(NrLink, "simfl.sim.radio.nr_link:NrRadioLink")


def build_radio_link(model: RadioLinkModel, channel: Channel, radio_map: RadioMap,
                     direction: str, fading: FadingGains | None = None,
                     sinr_threshold_db: float | None = None,
                     rngs: RngTree | None = None) -> RadioLink:
    """The ``direction`` link of the shared radio for ``network.radio.link = model``."""
    link: RadioLink = implementation_of(model, "network.radio.link.kind")(
        model, channel, radio_map, direction, fading, sinr_threshold_db, rngs)
    return link
