"""The availability modes of FedGS (and FLGo): per-round Bernoulli(p_i(t)) draws.

IDL (everyone online), the data-size modes MDF and LDF, the label modes YMF and YC, and
the log-normal modes LN and SLN; :class:`FedGSMode` holds what the tunable ones share
(``beta``, ``variant``, ``redraw_until_nonempty``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from simfl.core.config.availability.base import Availability
from simfl.core.config.checks import require


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
