"""Channels: a link's loss model per transfer attempt, its bit rate and the client's distance.

Every channel kind carries a :class:`~simfl.core.config.rate.Rate` and, optionally, a
:class:`Distance` whose path loss shifts each client's mean SNR.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from simfl.core.config.checks import finite, non_negative, positive, probability, require
from simfl.core.config.node import Choice, Node
from simfl.core.config.rate import FixedRate, Rate, ShannonRate


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
        finite(self, "d_max_m", "d_ref_m", "path_loss_exponent")
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
    """Bursty losses: a Good/Bad Markov chain per client and direction, one step per attempt.

    The chain has two states, Good and Bad. An attempt is lost with probability
    ``loss_good`` in Good and ``loss_bad`` in Bad (defaults 0 and 1: the two-parameter
    Gilbert channel, lost exactly when Bad). Each client's chain starts in the stationary
    distribution (pi_B = p_gb / (p_gb + p_bg)) at its first attempt and keeps its state
    across attempts and rounds. The chain advances one step per attempt of that client,
    whatever the time between attempts, with transition probabilities ``p_gb`` (Good to Bad)
    and ``p_bg``; for a chain that runs in simulated time, see
    ``gilbert_elliott_continuous``. Not modelled: any dependence of the chain on distance,
    SNR or other clients.
    """

    kind = "gilbert_elliott"
    paper = "Gilbert (1960), Elliott (1963); NTIA gilbert-elliot-model"
    p_gb: float = 0.02
    p_bg: float = 0.25
    loss_good: float = 0.0
    loss_bad: float = 1.0

    def validate(self) -> None:
        super().validate()
        probability(self, "p_gb", "p_bg", "loss_good", "loss_bad")
        require(self.p_gb + self.p_bg > 0, "p_bg", self.p_bg,
                "p_gb + p_bg > 0 (otherwise the chain has no stationary distribution)")


@dataclass(frozen=True)
class ContinuousGilbertElliottChannel(Channel):
    """Bursty losses in simulated time: a Good/Bad chain with exponential sojourns.

    Each client and direction has its own chain; it leaves Good at rate ``rate_gb_per_s``
    and Bad at ``rate_bg_per_s``, and starts in its stationary distribution at the client's
    first attempt. An attempt of airtime T that starts Bad is lost with probability
    ``loss_bad``; one that starts Good is lost if the chain leaves Good before it ends, and
    otherwise with probability ``loss_good``. The state is sampled lazily, only when the
    link is used, through the chain's exact transition probabilities over the time since the
    last use. Not modelled: any dependence of the chain on distance, SNR or other clients.
    """

    kind = "gilbert_elliott_continuous"
    paper = "Gilbert (1960), Elliott (1963); NTIA gilbert-elliot-model"
    rate_gb_per_s: float = 0.02
    rate_bg_per_s: float = 0.25
    loss_good: float = 0.0
    loss_bad: float = 1.0

    def validate(self) -> None:
        super().validate()
        probability(self, "loss_good", "loss_bad")
        non_negative(self, "rate_gb_per_s", "rate_bg_per_s")
        finite(self, "rate_gb_per_s", "rate_bg_per_s")
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
        finite(self, "mean_snr_db", "threshold_db", "k_factor")
