"""Link loss models: each transfer attempt either arrives or is lost.

``Link.transmit`` is the public template: draw the attempt's SNR (fading channels and
shannon rates), turn it into the airtime, then decide the loss. Kinds override only
the private hooks ``_snr`` (the draw), ``_rate_bps`` (the rate it allows) and ``_lost``
(the decision), so the airtime and
the loss of an attempt come from the same draw. Losses are decided per whole-update
attempt, not per packet. :func:`arq_transfer` sends one message over a link with
back-to-back retries (ARQ) on the simulation clock.

One Link serves every client of one direction; state that belongs to a client (its
Gilbert-Elliott chain, its distance) is kept here keyed by the ``client`` argument.
"""

from __future__ import annotations

import math
from typing import Any, Callable, ClassVar, Generator, NamedTuple

import numpy as np
import simpy

from simfl.core.config.network import (Channel, ContinuousGilbertElliottChannel, ErasureChannel,
                                       FixedRate, GilbertElliottChannel,
                                       IdealChannel, RayleighChannel, ShannonRate)
from simfl.core.config.mac import CALLBACKS, OFF_CLOCK, PROCESS
from simfl.core.registry import implementation_of, implements
from simfl.core.rng import RngTree
from simfl.sim.links.cohort_draws import power_gains, shannon_airtimes_s

#: what a link class claims when it declares no engines of its own
PROCESS_ONLY = frozenset({PROCESS})


class Delivery(NamedTuple):
    """One attempt's result (a named tuple: one is made per transfer attempt)."""

    ok: bool
    airtime_s: float


def db_to_linear(db: float) -> float:
    return float(10.0 ** (db / 10.0))


class Link:
    """An ideal link: every attempt arrives after ``n_bytes * 8 / rate`` seconds.

    ``rngs`` is needed only for per-client distances (``cfg.distance``). ``draws`` says
    whether ``transmit`` uses its ``rng`` argument at all (callers may pass None if not).
    """

    draws = False
    #: the device-round engines (:mod:`simfl.sim.rounds.engines`) on which rounds over
    #: this class of link give the processes' results; read from each class itself
    engines: ClassVar[frozenset[str]] = frozenset({PROCESS, CALLBACKS, OFF_CLOCK})
    #: whether :meth:`cohort_attempts` draws this class's attempts for a cohort at once;
    #: read from each class itself (a subclass that declares none does not)
    cohort_capable: ClassVar[bool] = True
    #: whether each client's attempts take their own airtime (the MAC then says which
    #: engines still hold: ``MacCapabilities.placed_engines``)
    airtime_by_client: ClassVar[bool] = False

    def __init__(self, cfg: Channel, rngs: RngTree | None = None) -> None:
        if cfg.distance is not None and rngs is None:
            raise ValueError("a channel with a distance model needs rngs to draw distances")
        self.cfg = cfg
        self.rngs = rngs
        self._shift_db: dict[int, float] = {}

    def round_engines(self, cohort: bool = False) -> frozenset[str]:
        """The engines this link runs rounds on: those its own class declares (a subclass
        that declares none claims the processes only), and with ``cohort`` (the uplink of
        a round whose contention is settled for the whole cohort at once) off the clock
        if it :meth:`draws_cohort`; off the clock never with a distance model."""
        declared: frozenset[str] = type(self).__dict__.get("engines", PROCESS_ONLY)
        if cohort and self.draws_cohort():
            declared = declared | {OFF_CLOCK}
        return declared - {OFF_CLOCK} if self.cfg.distance is not None else declared

    def draws_cohort(self) -> bool:
        """Whether :meth:`cohort_attempts` serves (declared; a fixed or shannon rate)."""
        return (bool(type(self).__dict__.get("cohort_capable", False))
                and isinstance(self.cfg.rate, (FixedRate, ShannonRate)))

    def attempt_airtime_s(self, n_bytes: int) -> float:
        """Each attempt's airtime for ``n_bytes`` on a kind that draws no SNR (no distance)."""
        rate_bps = self._rate_bps(Link._snr(self, 0.0, -1, None))  # the SNR drawn by none
        return n_bytes * 8.0 / rate_bps if rate_bps > 0 else math.inf

    def cohort_attempts(self, clients: np.ndarray, t_s: np.ndarray, n_bytes: int,
                        rng: np.random.Generator | None) -> tuple[np.ndarray, np.ndarray]:
        """One attempt of ``n_bytes`` by each of ``clients`` (distinct ids) from ``t_s``:
        whether each is lost, and its airtime, drawn at once with :meth:`transmit`'s law
        (client state, if any, moves on as there); :meth:`lost_cohort` decides the loss."""
        airtime_s = self.attempt_airtime_s(n_bytes)
        lost = (np.zeros(clients.size, dtype=bool) if rng is None
                else self.lost_cohort(clients, t_s, airtime_s, rng))
        return lost, np.full(clients.size, airtime_s)

    def lost_cohort(self, clients: np.ndarray, t_s: np.ndarray, airtime_s: float,
                    rng: np.random.Generator) -> np.ndarray:
        """Which attempts of :meth:`cohort_attempts` (one ``airtime_s``) are lost: none."""
        return np.zeros(clients.size, dtype=bool)

    def transmit(self, t_s: float, n_bytes: int, rng: np.random.Generator | None, *,
                 client: int = -1) -> Delivery:
        """One attempt of ``client`` starting at ``t_s``: whether it arrives, and its airtime."""
        snr = self._snr(t_s, client, rng)
        rate_bps = self._rate_bps(snr)
        airtime_s = n_bytes * 8.0 / rate_bps if rate_bps > 0 else math.inf
        lost = self._lost(t_s, airtime_s, snr, client, rng)
        return Delivery(ok=not lost, airtime_s=airtime_s)

    def mean_snr_db(self, client: int, snr_db: float) -> float:
        """``snr_db`` shifted by the path loss of ``client``'s distance (if modelled)."""
        distance = self.cfg.distance
        if distance is None:
            return snr_db
        if client not in self._shift_db:
            assert self.rngs is not None, "checked when the link was made"
            u = self.rngs.stream(f"channel/distance/{client}").random()
            d_m = distance.d_min_m + u * (distance.d_max_m - distance.d_min_m)
            self._shift_db[client] = distance.shift_db(d_m)
        return snr_db + self._shift_db[client]

    def _rate_bps(self, snr: float | None) -> float:
        """The bit rate of an attempt that drew ``snr``."""
        rate = self.cfg.rate
        if isinstance(rate, ShannonRate):
            assert snr is not None, "a shannon rate draws an SNR"
            return rate.efficiency * rate.bandwidth_hz * math.log2(1.0 + self._rate_snr(snr))
        if isinstance(rate, FixedRate):
            return rate.rate_bps
        raise TypeError(f"no link rate for {type(rate).__name__}")

    def _snr(self, t_s: float, client: int, rng: np.random.Generator | None) -> float | None:
        """Linear SNR of ``client``'s attempt at ``t_s``, or None where nothing needs one."""
        if isinstance(self.cfg.rate, ShannonRate):
            return db_to_linear(self.mean_snr_db(client, self.cfg.rate.snr_db))
        return None

    def _rate_snr(self, snr: float) -> float:
        """The SNR that sets a shannon rate for an attempt that drew ``snr``."""
        return snr

    def _lost(self, t_s: float, airtime_s: float, snr: float | None, client: int,
              rng: np.random.Generator | None) -> bool:
        return False


class ErasureLink(Link):
    """Each attempt is lost independently with probability ``p``."""

    cfg: ErasureChannel
    draws = True
    engines = frozenset({PROCESS, CALLBACKS})
    cohort_capable = True

    def _lost(self, t_s: float, airtime_s: float, snr: float | None, client: int,
              rng: np.random.Generator | None) -> bool:
        assert rng is not None, "a link that draws gets its stream"
        return bool(rng.random() < self.cfg.p)

    def lost_cohort(self, clients: np.ndarray, t_s: np.ndarray, airtime_s: float,
                    rng: np.random.Generator) -> np.ndarray:
        return np.asarray(rng.random(clients.size) < self.cfg.p)


class RayleighLink(Link):
    """Block Rayleigh (or Rician) fading: one power gain per attempt; outage below threshold.

    With a shannon rate and a threshold, the link's rates span [R(threshold), inf): an
    attempt whose SNR is at least the threshold runs at the capacity of its SNR; one in
    outage (SNR < threshold) is sent at the lowest rate, R(threshold), and is lost. So a
    deep fade costs one lost attempt of airtime bits / R(threshold), never the (unbounded)
    airtime of its own capacity: mean airtime = bits * E[1 / R(max(SNR, threshold))],
    loss probability P(SNR < threshold) (Rayleigh: 1 - exp(-threshold / mean SNR)).
    Without a threshold every attempt arrives at the capacity of its SNR, however low.
    """

    cfg: RayleighChannel
    draws = True
    engines = frozenset({PROCESS, CALLBACKS})
    cohort_capable = True

    def _rate_snr(self, snr: float) -> float:
        threshold_db = self.cfg.threshold_db
        return snr if threshold_db is None else max(snr, db_to_linear(threshold_db))

    def _snr(self, t_s: float, client: int, rng: np.random.Generator | None) -> float:
        assert rng is not None, "a link that draws gets its stream"
        k = self.cfg.k_factor
        if k == 0:
            gain = rng.standard_exponential()
        else:
            x, y = rng.standard_normal(2)
            los, spread = math.sqrt(k / (k + 1.0)), math.sqrt(0.5 / (k + 1.0))
            gain = (los + spread * x) ** 2 + (spread * y) ** 2
        return db_to_linear(self.mean_snr_db(client, self.cfg.mean_snr_db)) * float(gain)

    def _lost(self, t_s: float, airtime_s: float, snr: float | None, client: int,
              rng: np.random.Generator | None) -> bool:
        threshold_db = self.cfg.threshold_db
        assert snr is not None, "a fading link draws an SNR"
        return threshold_db is not None and snr < db_to_linear(threshold_db)

    def cohort_attempts(self, clients: np.ndarray, t_s: np.ndarray, n_bytes: int,
                        rng: np.random.Generator | None) -> tuple[np.ndarray, np.ndarray]:
        """SNR: a power gain times the one mean SNR; lost below the threshold; a shannon
        rate's airtime at the capacity of max(SNR, threshold)."""
        assert rng is not None, "a link that draws gets its stream"
        threshold_db, rate = self.cfg.threshold_db, self.cfg.rate
        snr = (db_to_linear(self.mean_snr_db(-1, self.cfg.mean_snr_db))
               * power_gains(self.cfg.k_factor, clients.size, rng))
        floor = 0.0 if threshold_db is None else db_to_linear(threshold_db)
        lost = snr < floor  # no threshold: never
        if isinstance(rate, ShannonRate):
            return lost, shannon_airtimes_s(rate, n_bytes, np.maximum(snr, floor))
        return lost, np.full(clients.size, self.attempt_airtime_s(n_bytes))


def _gilbert_elliott_link(cfg: Any, rngs: RngTree | None) -> Link:
    from simfl.sim.links.gilbert_elliott import GilbertElliottLink  # its kinds build on Link

    return GilbertElliottLink(cfg, rngs)


def _continuous_gilbert_elliott_link(cfg: Any, rngs: RngTree | None) -> Link:
    from simfl.sim.links.gilbert_elliott import ContinuousGilbertElliottLink

    return ContinuousGilbertElliottLink(cfg, rngs)


# the Link of each channel kind, built as ``impl(cfg, rngs)`` (a class, or a function of
# the config that builds one; ``simfl.register`` adds more)
for _config, _link in ((IdealChannel, Link), (ErasureChannel, ErasureLink),
                       (RayleighChannel, RayleighLink),
                       (GilbertElliottChannel, _gilbert_elliott_link),
                       (ContinuousGilbertElliottChannel, _continuous_gilbert_elliott_link)):
    implements(_config, _link)


def build_link(cfg: Channel, rngs: RngTree | None = None,
               field: str = "network.uplink.kind") -> Link:
    """The Link of ``cfg``; ``rngs`` is required when ``cfg.distance`` is set; ``field``
    names the channel in the error when its kind has no implementation."""
    link: Link = implementation_of(cfg, field)(cfg, rngs)
    return link


class Links(NamedTuple):
    """The two directions between the server and its clients."""

    downlink: Link
    uplink: Link


#: when an attempt's radio is on: (start, end) offsets in seconds from the attempt's
#: start, in order and disjoint; the device waits at idle power for the rest
Bursts = tuple[tuple[float, float], ...]

#: ``share(client, t_s, airtime_s) -> (wall_s, bursts)``: how long an attempt of
#: ``airtime_s`` that starts at ``t_s`` occupies the device under a MAC's sharing rule,
#: and when within that its radio transmits
Share = Callable[[int, float, float], tuple[float, Bursts]]

#: ``serve(client, n_bits, airtime_s)``: an event that fires when a shared medium has
#: served an attempt's bits, or None when the attempt lasts what ``share`` says
Serve = Callable[[int, float, float], "simpy.Event | None"]


def arq_transfer(env: simpy.Environment, link: Link, n_bytes: int,
                 rng: np.random.Generator | None, *, client: int, max_attempts: int,
                 share: Share | None = None, serve: Serve | None = None,
                 on_attempt: Callable[[float, float, Bursts | None], None] | None = None,
                 on_lost: Callable[[int, bool], None] | None = None
                 ) -> Generator[simpy.Event, object, bool]:
    """SimPy generator: send ``n_bytes`` of ``client`` over ``link`` with up to
    ``max_attempts`` back-to-back attempts; returns True once an attempt gets through.

    Each attempt takes its airtime, or with ``share`` (a MAC's sharing rule) the wall
    time that rule gives, or with ``serve`` until the event it returns fires (a band
    shared by processor sharing: the attempt's end moves with the other uploads).
    ``on_attempt(airtime_s, wall_s, bursts)`` is told when an attempt starts (e.g. to
    charge its energy; ``bursts`` is None without ``share``: the radio is on for the
    whole airtime), ``on_lost(attempt, retrying)`` when attempt
    number ``attempt`` (from 1) was lost and whether another follows.
    """
    for attempt in range(1, max_attempts + 1):
        delivery = link.transmit(env.now, n_bytes, rng, client=client)
        wall_s, bursts = delivery.airtime_s, None
        if share is not None:
            wall_s, bursts = share(client, env.now, delivery.airtime_s)
        served = None if serve is None else serve(client, 8.0 * n_bytes, delivery.airtime_s)
        if on_attempt is not None:
            on_attempt(delivery.airtime_s, wall_s, bursts)
        yield env.timeout(wall_s) if served is None else served
        if delivery.ok:
            return True
        if on_lost is not None:
            on_lost(attempt, attempt < max_attempts)
    return False
