"""The network between clients and server: links, channels, rates, MAC and ARQ."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Literal

from simfl.core.config.node import (Choice, Node, non_negative, positive, probability,
                                    require)
from simfl.core.config.papers import RANDOM_ACCESS


def _finite(node: Node, *names: str) -> None:
    for name in names:
        value = getattr(node, name)
        if value is not None:
            require(math.isfinite(value), name, value, "a finite number")


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
    no SNR (ideal, erasure, gilbert_elliott) uses ``snr_db`` instead, shifted per
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
        _finite(self, "bandwidth_hz", "snr_db")


@dataclass(frozen=True)
class Distance(Node):
    """Per-client distance to the server; log-distance path loss shifts each mean SNR.

    Client i sits at d_i ~ U(d_min_m, d_max_m), drawn once from the stream
    ``channel/distance/<i>`` (so its uplink and downlink share the draw), and its mean
    SNR in dB moves by -10 * path_loss_exponent * log10(d_i / d_ref_m): the configured
    SNR is the SNR at ``d_ref_m``. Not modelled: shadowing, mobility, antenna gains.
    """

    d_min_m: float = 10.0
    d_max_m: float = 100.0
    d_ref_m: float = 10.0
    path_loss_exponent: float = 3.0

    def validate(self) -> None:
        positive(self, "d_min_m", "d_max_m", "d_ref_m", "path_loss_exponent")
        _finite(self, "d_max_m", "d_ref_m", "path_loss_exponent")
        require(self.d_max_m >= self.d_min_m, "d_max_m", self.d_max_m,
                f"a distance >= d_min_m = {self.d_min_m}")

    def shift_db(self, distance_m: float) -> float:
        """Change of the mean SNR (dB) of a client at ``distance_m``."""
        return -10.0 * self.path_loss_exponent * math.log10(distance_m / self.d_ref_m)


@dataclass(frozen=True)
class Channel(Choice, point="channels"):
    """A link's loss model; every kind carries its bit ``rate`` and optional ``distance``.

    Losses are decided per attempt of a whole update (not per packet); retrying is ARQ's
    business. ``distance`` needs an SNR to shift: a fading channel or a shannon rate.
    """

    #: whether the channel draws an SNR per attempt (a shannon rate then uses it)
    fading: ClassVar[bool] = False
    rate: Rate = FixedRate()
    distance: Distance | None = None

    def validate(self) -> None:
        has_snr = self.fading or isinstance(self.rate, ShannonRate)
        require(self.distance is None or has_snr, "distance", self.distance,
                "null unless the link has an SNR (a fading channel or a shannon rate)")


@dataclass(frozen=True)
class IdealChannel(Channel):
    """Every transfer arrives; the only cost is its airtime."""

    kind = "ideal"


@dataclass(frozen=True)
class ErasureChannel(Channel):
    """Each transfer attempt is lost independently with probability ``p``."""

    kind = "erasure"
    paper = ("Elias, Coding for Two Noisy Channels, Third London Symposium on Information "
             "Theory, 1955 (erasure channel)")
    p: float = 0.1

    def validate(self) -> None:
        super().validate()
        probability(self, "p")


@dataclass(frozen=True)
class GilbertElliottChannel(Channel):
    """Bursty losses: a two-state (Good/Bad) Markov chain per client and direction.

    An attempt is lost with probability ``loss_good`` in Good and ``loss_bad`` in Bad
    (defaults 0 and 1: the two-parameter Gilbert channel, lost exactly when Bad). Each
    client's chain starts in the stationary distribution (pi_B = p_gb / (p_gb + p_bg))
    at its first attempt and keeps its state across attempts and rounds.

    ``time_model = "per_attempt"`` advances the chain one step per attempt of that
    client, whatever the time between attempts, with transition probabilities ``p_gb``
    (Good to Bad) and ``p_bg``. ``time_model = "continuous"`` lets the chain run in
    simulated time with rates ``rate_gb_per_s`` and ``rate_bg_per_s`` (exponential
    sojourns): an attempt of airtime T that starts Bad is lost with probability
    ``loss_bad``; one that starts Good is lost if the chain leaves Good before it ends,
    and otherwise with probability ``loss_good``. The state is sampled lazily, only when
    the link is used, through the chain's exact transition probabilities over the time since the last use. Each time model reads
    only its own pair of parameters. Not modelled: any dependence of the chain on
    distance, SNR or other clients.
    """

    kind = "gilbert_elliott"
    paper = "Gilbert (1960), Elliott (1963); NTIA gilbert-elliot-model"
    time_model: Literal["per_attempt", "continuous"] = "per_attempt"
    p_gb: float = 0.02
    p_bg: float = 0.25
    rate_gb_per_s: float = 0.02
    rate_bg_per_s: float = 0.25
    loss_good: float = 0.0
    loss_bad: float = 1.0

    def validate(self) -> None:
        super().validate()
        probability(self, "p_gb", "p_bg", "loss_good", "loss_bad")
        non_negative(self, "rate_gb_per_s", "rate_bg_per_s")
        _finite(self, "rate_gb_per_s", "rate_bg_per_s")
        require(self.p_gb + self.p_bg > 0, "p_bg", self.p_bg,
                "p_gb + p_bg > 0 (otherwise the chain has no stationary distribution)")
        require(self.rate_gb_per_s + self.rate_bg_per_s > 0, "rate_bg_per_s",
                self.rate_bg_per_s, "rate_gb_per_s + rate_bg_per_s > 0")


@dataclass(frozen=True)
class RayleighChannel(Channel):
    """Block fading: SNR = mean SNR * |h|^2 per attempt; lost when SNR < threshold_db.

    |h|^2 ~ Exp(1) (Rayleigh), or with ``k_factor`` K > 0 the Rician power gain
    (line-of-sight to scattered power ratio K, linear; mean gain 1). One independent
    draw per attempt, constant during the attempt; a shannon rate turns the same draw
    into the attempt's airtime. With a shannon rate and a threshold, the threshold is
    the lowest SNR the link's rates serve: an attempt at or above it runs at the
    capacity of its SNR, one in outage is sent at the threshold's rate (airtime bits /
    R(threshold)) and lost, so no attempt lasts longer than at the threshold's rate.
    ``threshold_db = null`` disables outage losses (only the rate then depends on the
    draw, and a deep fade makes a very long attempt). ``mean_snr_db`` is the SNR at the
    reference distance when ``distance`` is set. Not modelled: correlation of the fading between attempts
    or directions, fading within an attempt (no ergodic averaging), shadowing,
    interference.
    """

    kind = "rayleigh"
    paper = ("Tse and Viswanath, Fundamentals of Wireless Communication, Cambridge "
             "University Press 2005, ch. 5 (outage)")
    fading = True
    mean_snr_db: float = 10.0
    threshold_db: float | None = 0.0
    k_factor: float = 0.0

    def validate(self) -> None:
        super().validate()
        non_negative(self, "k_factor")
        _finite(self, "mean_snr_db", "threshold_db", "k_factor")


@dataclass(frozen=True)
class Mac(Choice, point="macs"):
    """Medium access between the clients and the server."""


@dataclass(frozen=True)
class IdealMac(Mac):
    """No contention: every client has its own link."""

    kind = "ideal"


def _per_client(node: Node, name: str) -> None:
    """``name`` is one probability for every client or a non-empty list of them."""
    probability(node, name)
    require(getattr(node, name) != (), name, (), "a probability or a non-empty list of them")


#: shortest and longest MAC slot (seconds): a microsecond to a few hours
MIN_SLOT_S, MAX_SLOT_S = 1e-6, 1e4
#: smallest non-zero ALOHA access probability (mean wait 1e9 slots)
MIN_ACCESS_PROB = 1e-9
#: largest ALOHA contention window (slots)
MAX_WINDOW = 2 ** 30


def _slot(node: Node, name: str = "slot_s") -> None:
    value = getattr(node, name)
    require(MIN_SLOT_S <= value <= MAX_SLOT_S, name, value,
            f"a slot length in [{MIN_SLOT_S:g}, {MAX_SLOT_S:g}] seconds")


@dataclass(frozen=True)
class TdmaMac(Mac):
    """Time division: one slot per invited client per frame, or equal bandwidth shares.

    ``mode = "slots"``: frames start when the round opens and hold one slot of
    ``slot_s`` per client that starts the round (in client-id order); a client's uplink
    transmits only inside its own slot, so an attempt of airtime A ready at time t ends
    when A seconds of its slots have elapsed after t. ``mode = "shared"``: the uplink's
    rate is split equally among the n clients that start the round (frequency division,
    fixed for the round), so every attempt's airtime is n times longer. Energy: with
    slots the radio transmits only in its own slots (the attempt's airtime at ``tx_w``,
    or its bits at ``tx_j_per_bit``) and waits for them at ``idle_w``; shared, it
    transmits for the whole, n times longer, attempt. Assumptions:
    perfect synchronisation, no guard times, a slot left unused by a finished client is
    not reassigned, the shares are not re-divided when clients finish.
    """

    kind = "tdma"
    mode: Literal["slots", "shared"] = "slots"
    slot_s: float = 0.1

    def validate(self) -> None:
        positive(self, "slot_s")
        _finite(self, "slot_s")
        _slot(self)


@dataclass(frozen=True)
class SlottedAlohaMac(Mac):
    """Slotted ALOHA access to the uplink, optionally with binary exponential backoff.

    Before its upload a client contends for access in slots of ``slot_s`` on a grid
    from t = 0, starting with the first slot that begins after it is ready. With
    ``backoff = "none"`` client i transmits in each slot with probability
    ``access_prob`` (one number, or a list with one per client); with
    ``"binary_exponential"`` it waits U{0..CW-1} slots before each transmission, CW =
    min(2^k cw_min, cw_max) after k collisions. Each transmitter picks one of
    ``channels`` orthogonal access channels uniformly; a slot's channel carries a
    success iff exactly one client chose it (N p (1-p)^(N-1) successes per slot for N
    saturated clients and one channel). A client still contending when the round
    closes, or after ``max_attempts`` collided transmissions, is missing with reason
    ``collided``. Every contention transmission costs ``slot_s`` of airtime.

    What a success grants depends on ``data_phase``. ``"parallel"`` (default): the
    access slots are a request channel and a success gives the client its own data
    resource, so its upload (with ARQ) takes its link airtime at the full rate at once,
    however many other granted clients upload at the same time (as when random access
    is followed by scheduled, orthogonal data transmissions). ``"serialised"``: the
    uploads share ``channels`` data channels, one upload attempt per channel at a time:
    each attempt (an ARQ retry included) takes the channel that is free first, in order
    of request, and the client waits for it at idle power. A client that leaves while
    queued (deadline, battery, offline) frees its place, but attempts already queued
    behind it keep their start times. Not modelled: capture effect, carrier sensing,
    interference between data transfers.

    ``contention`` picks how the slots are simulated. ``"per_event"`` (default): slot by
    busy slot, in the clock's order. ``"vectorised"``: in a round where every contender's
    ready time is known when the round starts (ideal links, infinite energy, the
    parallel data phase, nobody leaving mid-round, no over-selection, no late uploads
    kept), the whole round's contention is resolved at once in numpy: the same rules
    and distributions, drawn in another order, many times faster for large cohorts;
    other rounds fall back to ``"per_event"``.
    """

    kind = "slotted_aloha"
    paper = ("Roberts, ALOHA packet system with and without slots and capture, ACM SIGCOMM "
             "CCR 5(2), 1975")
    access_prob: float | tuple[float, ...] = 0.1
    slot_s: float = 0.01
    channels: int = 1
    backoff: Literal["none", "binary_exponential"] = "none"
    cw_min: int = 2
    cw_max: int = 1024
    max_attempts: int | None = None
    data_phase: Literal["parallel", "serialised"] = "parallel"
    contention: Literal["per_event", "vectorised"] = "per_event"

    def validate(self) -> None:
        _per_client(self, "access_prob")
        probs = self.access_prob if isinstance(self.access_prob, tuple) else (self.access_prob,)
        require(all(p == 0.0 or p >= MIN_ACCESS_PROB for p in probs), "access_prob",
                self.access_prob, f"0 or a probability in [{MIN_ACCESS_PROB:g}, 1]")
        positive(self, "slot_s", "channels", "cw_min", "max_attempts")
        _finite(self, "slot_s")
        _slot(self)
        require(self.cw_max >= self.cw_min, "cw_max", self.cw_max,
                f"an integer >= cw_min = {self.cw_min}")
        require(self.cw_max <= MAX_WINDOW, "cw_max", self.cw_max,
                f"an integer <= {MAX_WINDOW} (2^30 slots)")


@dataclass(frozen=True)
class RelayMac(Mac):
    """The Random Access Model: a relay forwards uploads under a policy the server never sees.

    Each round, when it opens, the relay draws which of the clients that start the
    round it will forward, from a stationary policy: ``bernoulli`` forwards client i
    with probability ``probs[i]`` independently; ``capacity`` forwards ``capacity`` of
    them drawn without replacement with weights ``probs`` (successive sampling, so the
    inclusion probabilities are not proportional to the weights in general);
    ``aloha`` forwards those heard in ``slots`` slots of slotted ALOHA with access
    probabilities ``probs`` (a client stops after its success). ``probs`` is one number
    or a list with one per client. Uploads travel client to relay over the uplink; the
    relay drops the others on arrival (reason ``collided``). The decision is hidden in
    the relay: only the outcomes reach the server. Not modelled: the relay-to-server
    hop (ideal, instantaneous), the time the ALOHA slots take, buffering at the relay.
    """

    kind = "relay"
    paper = f"{RANDOM_ACCESS} (Random Access Model)"
    policy: Literal["bernoulli", "capacity", "aloha"] = "bernoulli"
    probs: float | tuple[float, ...] = 0.5
    capacity: int = 1
    slots: int = 1

    def validate(self) -> None:
        _per_client(self, "probs")
        positive(self, "capacity", "slots")


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
