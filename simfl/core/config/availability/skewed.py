"""Per-round availability skewed by the client's labels or by the time of day.

MIFA's adversarial model (rarely online when the smallest label is low) and diurnal
availability (FedLaAvg's day/night groups by label, or a sinusoidal rate).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from simfl.core.config.availability.base import Availability
from simfl.core.config.checks import positive, probability, require
from simfl.core.config.papers import MIFA


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
