"""Availability models: when a registered client is online and can be selected.

Two families (semantics in :mod:`simfl.sim.availability`):

* **per-round** models draw every client's state when a round opens, independently
  per round, and keep it for the whole round (``bernoulli``, the seven FedGS modes,
  ``mifa_adversarial``, ``diurnal``);
* **continuous-time** models (``markov``, ``trace``) change state at event times in
  simulated seconds; a client that goes offline while it works for the server loses
  that round's update with reason ``offline``.

Models that depend on a client's data (sizes or labels) get it from the task; they say
so with ``needs_labels``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Literal

from simfl.core.config.node import Choice, positive, probability, require
from simfl.core.config.papers import MIFA


@dataclass(frozen=True)
class Availability(Choice, point="availability"):
    """When a client is online and can be selected."""

    #: whether the builder must pass each client's label counts
    needs_labels: ClassVar[bool] = False


@dataclass(frozen=True)
class Always(Availability):
    """Every client is available at every round."""

    kind = "always"


@dataclass(frozen=True)
class Bernoulli(Availability):
    """Independent per-round draws: client i is available with probability p_i.

    ``p`` is one probability for all clients or a list with one per client; ``p_min``
    instead draws p_i ~ U(p_min, 1) once per client (MIFA's "random" model).
    The draw happens when a round opens; a client stays as drawn for the whole round.
    """

    kind = "bernoulli"
    paper = MIFA
    exclusive = (("p", "p_min"),)
    p: float | tuple[float, ...] | None = None
    p_min: float | None = None

    def validate(self) -> None:
        probability(self, "p", "p_min")
        require(self.p is None or self.p_min is None, "p_min", self.p_min,
                "null when p is set (set only one of them)")
        if self.p is None and self.p_min is None:
            self._set_default("p", 0.8)


_FEDGS = ("Wang et al., Federated Graph-based Sampling with Arbitrary Client Availability (FedGS), "
          "AAAI 2023; code WwZzz/FedGS utils/systemic_simulator.py")


@dataclass(frozen=True)
class FedGSMode(Availability):
    """A FedGS availability mode: per-round Bernoulli(p_i(t)) with an optional redraw.

    ``redraw_until_nonempty`` repeats a round's draw until at least one client is
    online (the FedGS simulator's loop); otherwise a round may have nobody online.
    ``variant`` picks the FedGS-repository formula/default (``fedgs``) or FLGo's. The
    round counter t of the time-varying modes is the 0-based round index for ``fedgs``
    and the index + 1 for ``flgo`` (FLGo numbers its first round 1).
    """

    paper = _FEDGS
    #: the default ``beta`` of each variant
    beta_defaults: ClassVar[dict[str, float]] = {}
    beta: float | None = None
    variant: Literal["fedgs", "flgo"] = "fedgs"
    redraw_until_nonempty: bool = False

    def validate(self) -> None:
        if self.beta is None and self.beta_defaults:
            self._set_default("beta", self.beta_defaults[self.variant])
        if self.beta is not None:
            require(0.0 <= self.beta <= 1.0, "beta", self.beta, "a number in [0, 1]")


@dataclass(frozen=True)
class Ideal(Availability):
    """FedGS IDL: every client online at every round (p_i = 1)."""

    kind = "ideal"
    paper = _FEDGS


@dataclass(frozen=True)
class MoreDataFirst(FedGSMode):
    """FedGS MDF: p_i = n_i^beta / max_j n_j^beta (bigger clients online more often)."""

    kind = "more_data_first"
    beta_defaults = {"fedgs": 1e-5, "flgo": 1e-4}


@dataclass(frozen=True)
class LessDataFirst(FedGSMode):
    """FedGS LDF: p_i = n_i^-beta / max_j n_j^-beta (smaller clients online more often)."""

    kind = "less_data_first"
    beta_defaults = {"fedgs": 0.1, "flgo": 0.5}


@dataclass(frozen=True)
class YMaxFirst(FedGSMode):
    """FedGS YMF: p_i = beta * min(Y_i) / max(1, |Y| - 1) + 1 - beta (higher labels first)."""

    kind = "y_max_first"
    needs_labels = True
    beta_defaults = {"fedgs": 0.1, "flgo": 0.1}


@dataclass(frozen=True)
class YCycle(FedGSMode):
    """FedGS YC: clients holding the label of the current phase of a cycle are online more.

    FedGS repository: T = 10 |Y| rounds, r_t = (1 + t mod T) / T, I_i(t) = 1 iff some
    held label y has y/|Y| < r_t <= (y+1)/|Y|. FLGo: T = 24, I_i(t) = 1 iff
    min(Y_i)/max(Y) <= r_t <= max(Y_i)/max(Y). Both: p_i(t) = beta I_i(t) + 1 - beta.
    """

    kind = "y_cycle"
    needs_labels = True
    beta_defaults = {"fedgs": 0.5, "flgo": 0.5}


@dataclass(frozen=True)
class LogNormal(FedGSMode):
    """FedGS LN: p_i = T_i / max_j T_j, T_i ~ LogNormal(0, -ln(1 - beta - 1e-6)), drawn once."""

    kind = "log_normal"
    beta_defaults = {"fedgs": 0.1, "flgo": 0.1}

    def validate(self) -> None:
        super().validate()
        require(self.beta is not None and self.beta < 1.0, "beta", self.beta, "a number in [0, 1) (sigma = -ln(1 - beta))")


@dataclass(frozen=True)
class SinLogNormal(LogNormal):
    """FedGS SLN: the LN probabilities times 0.4 sin(2 pi j / 23) + 0.5, j = t mod 24."""

    kind = "sin_log_normal"
    beta_defaults = {"fedgs": 0.1, "flgo": 0.1}


@dataclass(frozen=True)
class MifaAdversarial(Availability):
    """MIFA adversarial: p_i = p_min + (1 - p_min) min(Y_i) / (|Y| - 1), per-round draws.

    Clients whose smallest label is low are rarely online (MIFA uses p_min = 0.1 times
    its participation level; with 10 labels the divisor is 9).
    """

    kind = "mifa_adversarial"
    paper = MIFA
    needs_labels = True
    p_min: float | None = None

    def validate(self) -> None:
        probability(self, "p_min")
        if self.p_min is None:
            self._set_default("p_min", 0.1)


@dataclass(frozen=True)
class Diurnal(Availability):
    """Day/night availability: FedLaAvg's groups (by round) or a sinusoidal rate (by time).

    Group strategies (t = round index; a client's class is its most frequent label):
    ``number``: period 2E, group 0 (the classes below round(alpha |Y|)) online while
    t mod 2E < E, the other classes the rest; ``time``: the lower half of the classes
    online for E rounds, the upper half for floor(alpha E); ``block``: period E cut into
    ``num_blocks`` equal blocks, each client (shuffled, split evenly) online only in its
    block; ``mix``: like ``number`` with half the classes per group, then a fraction
    alpha of each group swapped to the other.
    ``sine``: a per-round Bernoulli draw with p(t) = mean_p (1 + A cos(2 pi (t -
    peak_s) / period_s)) at the round's opening time t, A = (r - 1)/(r + 1) for
    ``peak_trough_ratio`` r.
    """

    kind = "diurnal"
    paper = ("Yan et al., Distributed Non-Convex Optimization with Sublinear Speedup under "
             "Intermittent Client Availability (FedLaAvg), INFORMS J. Computing; Bonawitz et al., "
             "Towards Federated Learning at Scale, SysML 2019 (4x day/night ratio)")
    infinite_ok = ("peak_trough_ratio",)  # an infinite ratio: nobody online at the trough
    strategy: Literal["number", "time", "block", "mix", "sine"] = "number"
    period_rounds: int = 50
    alpha: float = 0.5
    num_blocks: int = 5
    mean_p: float = 0.5
    peak_trough_ratio: float = 4.0
    period_s: float = 86400.0
    peak_s: float = 0.0

    @property
    def needs_labels(self) -> bool:  # type: ignore[override]
        return self.strategy in ("number", "time", "mix")

    @property
    def amplitude(self) -> float:
        """A of the sinusoid: (r - 1) / (r + 1) for the peak/trough ratio r."""
        r = self.peak_trough_ratio
        return 1.0 if math.isinf(r) else (r - 1.0) / (r + 1.0)

    def validate(self) -> None:
        positive(self, "period_rounds", "num_blocks", "period_s")
        probability(self, "alpha", "mean_p")
        require(self.peak_trough_ratio >= 1.0, "peak_trough_ratio", self.peak_trough_ratio,
                "a number >= 1 (peak over trough)")
        require(self.mean_p * (1.0 + self.amplitude) <= 1.0, "mean_p", self.mean_p,
                f"at most {1.0 / (1.0 + self.amplitude):.6g}, so that the peak "
                "probability mean_p (1 + A) stays <= 1")
        require(self.strategy != "block" or self.period_rounds >= self.num_blocks,
                "period_rounds", self.period_rounds, f"at least num_blocks = {self.num_blocks}")


@dataclass(frozen=True)
class Markov(Availability):
    """Continuous-time on/off Markov chain per client (exponential on and off periods).

    ``on_rate_per_s`` is the off->on rate alpha, ``off_rate_per_s`` the on->off rate
    beta: long-run availability alpha / (alpha + beta), mean on period 1/beta. Each client
    starts in the stationary distribution.
    """

    kind = "markov"
    paper = ("two-state continuous-time Markov chain: availability alpha/(alpha+beta), "
             "P(on through T | on) = exp(-beta T)")
    on_rate_per_s: float = 1.0 / 1800.0
    off_rate_per_s: float = 1.0 / 600.0

    def validate(self) -> None:
        positive(self, "on_rate_per_s", "off_rate_per_s")


@dataclass(frozen=True)
class Trace(Availability):
    """Replay per-client on intervals from a file (simfl CSV, FLASH states or FedScale lists).

    ``format``: ``csv`` (rows ``client,start_s,end_s``), ``flash`` (JSON of state lines),
    ``fedscale_json`` / ``fedscale_csv`` (active/inactive lists). Simulated client c
    replays the trace's (c mod K)-th client of the K it lists, in id order. ``periodic``
    repeats the trace every ``period_s`` (default: the latest end time in the file, or
    FedScale's ``finish_time``).
    """

    kind = "trace"
    paper = ("trace replay; FLASH (Yang et al., WWW 2021) state traces; FedScale (Lai et al., "
             "ICML 2022) client_behave_trace lists")
    path: str = ""
    format: Literal["csv", "flash", "fedscale_json", "fedscale_csv"] = "csv"
    periodic: bool = False
    period_s: float | None = None

    def validate(self) -> None:
        require(bool(self.path), "path", self.path, "the path of a trace file")
        positive(self, "period_s")
        require(self.period_s is None or math.isfinite(self.period_s), "period_s",
                self.period_s, "a finite number of seconds > 0, or null")
