"""Path loss of the 3GPP channel model for 0.5-100 GHz (TR 38.901, sec. 7.4): urban
macro (``uma``), urban micro street canyon (``umi``), rural macro (``rma``) and indoor
office (``inh``).

Each kind gives, for a client at 2-D distance d2D from a site, the probability that the
link is line of sight (Table 7.4.2-1), the LoS and NLoS path losses (Table 7.4.1-1, with
d3D from the two antenna heights and the breakpoint distance) and the shadow-fading
standard deviation of each state. The shared radio draws each client-site pair's state
once: a uniform number per pair from the stream ``radio/los/<site>``, compared with the
LoS probability at the pair's current distance (so a client that moves away turns NLoS
at the distance the probability says, and back). A fraction ``indoor_fraction`` of the
clients (drawn from ``radio/indoor``) are indoors and add the outdoor-to-indoor loss of
sec. 7.4.3 (low- or high-loss building, an indoor distance of min(U, U) with U uniform on
[0, 25] m, or [0, 10] m for ``rma``, and its Gaussian spread).

Distances shorter than the model's minimum (10 m outdoors, 1 m indoors) are taken as that
minimum. Frequencies are in Hz here; the tables' formulas take f_c in GHz. Not modelled:
the UMa effective-environment height's random draw (h_E = 1 m), the optional NLoS models,
and fast fading (``network.radio.fading`` adds that).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from simfl.core.config.checks import finite, probability, require
from simfl.core.config.radio import SPEED_OF_LIGHT_MPS, PathLoss

_SOURCE = "3GPP TR 38.901 V17.0.0 (2022-03), sec. 7.4"


def _log10(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.log10(x))


@dataclass(frozen=True)
class Tr38901(PathLoss):
    """The common part of the TR 38.901 scenarios (not a kind by itself)."""

    #: the carrier frequencies (Hz) the scenario's formulas hold for
    freq_range_hz: ClassVar[tuple[float, float]] = (0.5e9, 100e9)
    #: the base station and client heights (m) the scenario allows
    h_bs_range_m: ClassVar[tuple[float, float]] = (10.0, 10.0)
    h_ut_range_m: ClassVar[tuple[float, float]] = (1.5, 22.5)
    #: shorter 2-D distances (m) are taken as this
    min_distance_m: ClassVar[float] = 10.0
    #: the largest indoor distance (m) of the outdoor-to-indoor loss
    max_indoor_m: ClassVar[float] = 25.0
    sigma_los_db: ClassVar[float] = 4.0
    sigma_nlos_db: ClassVar[float] = 6.0

    carrier_hz: float = 3.5e9
    h_bs_m: float = 10.0
    h_ut_m: float = 1.5
    los: Literal["probability", "always", "never"] = "probability"
    indoor_fraction: float = 0.0
    o2i: Literal["low", "high"] = "low"

    def validate(self) -> None:
        finite(self, "carrier_hz", "h_bs_m", "h_ut_m")
        for name, (lo, hi), scale, unit in (
                ("carrier_hz", self.freq_range_hz, 1e9, "GHz"),
                ("h_bs_m", self.h_bs_range_m, 1.0, "m"), ("h_ut_m", self.h_ut_range_m, 1.0, "m")):
            require(lo <= getattr(self, name) <= hi, name, getattr(self, name),
                    f"{lo / scale:g} to {hi / scale:g} {unit} for {self.kind} ({_SOURCE})")
        probability(self, "indoor_fraction")

    @property
    def f_ghz(self) -> float:
        return self.carrier_hz / 1e9

    def los_probability(self, d2d_m: np.ndarray) -> np.ndarray:
        """The probability that a link ``d2d_m`` metres long (2-D) is line of sight."""
        raise NotImplementedError

    def los_db(self, d2d_m: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def nlos_db(self, d2d_m: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def d3d_m(self, d2d_m: np.ndarray) -> np.ndarray:
        return np.asarray(np.hypot(d2d_m, self.h_bs_m - self.h_ut_m))

    def clamp(self, d2d_m: np.ndarray) -> np.ndarray:
        return np.asarray(np.maximum(np.asarray(d2d_m, dtype=float), self.min_distance_m))

    def _two_slope_db(self, d2d_m: np.ndarray, a_db: float, slope: float,
                      bp_weight: float) -> np.ndarray:
        """The urban LoS loss of Table 7.4.1-1 (UMa, UMi): a + slope log10 d3D + 20 log10 f
        up to the breakpoint d'_BP, then a + 40 log10 d3D + 20 log10 f - bp_weight
        log10(d'_BP^2 + (h_BS - h_UT)^2)."""
        d3, f = self.d3d_m(d2d_m), self.f_ghz
        bp = _breakpoint_m(self.h_bs_m, self.h_ut_m, self.carrier_hz)
        near = a_db + slope * _log10(d3) + 20.0 * math.log10(f)
        far = (a_db + 40.0 * _log10(d3) + 20.0 * math.log10(f)
               - bp_weight * math.log10(bp ** 2 + (self.h_bs_m - self.h_ut_m) ** 2))
        return np.asarray(np.where(d2d_m <= bp, near, far))

    def pair_loss_db(self, d2d_m: np.ndarray, los: np.ndarray) -> np.ndarray:
        """The path loss of each link in its LoS (True) or NLoS state, in dB."""
        d = self.clamp(d2d_m)
        return np.asarray(np.where(los, self.los_db(d), self.nlos_db(d)))

    def pair_sigma_db(self, d2d_m: np.ndarray, los: np.ndarray) -> np.ndarray:
        """The shadow-fading standard deviation (dB) of each link in its state."""
        return np.asarray(np.where(los, self.sigma_los_db, self.sigma_nlos_db))

    def is_los(self, d2d_m: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Each link's state from its uniform draw ``u``, under the ``los`` setting."""
        if self.los != "probability":
            return np.full(np.shape(d2d_m), self.los == "always")
        return np.asarray(u < self.los_probability(np.asarray(d2d_m, dtype=float)))

    def loss_db(self, d_m: np.ndarray) -> np.ndarray:
        """The loss (dB) expected over the link's state: the LoS and NLoS losses weighted
        by the LoS probability (used where a link has no drawn state of its own, such as
        an interferer's path to another cell's access point)."""
        d = self.clamp(d_m)
        if self.los != "probability":
            return self.pair_loss_db(d, np.full(d.shape, self.los == "always"))
        p = self.los_probability(d)
        return np.asarray(p * self.los_db(d) + (1.0 - p) * self.nlos_db(d))

    def o2i_db(self, d_in_m: np.ndarray, z: np.ndarray) -> np.ndarray:
        """Outdoor-to-indoor loss (sec. 7.4.3.1) at indoor distances ``d_in_m`` with
        standard normal draws ``z`` for its spread: through the wall, inside, and N(0, s^2)."""
        f = self.f_ghz
        glass, concrete = 2.0 + 0.2 * f, 5.0 + 4.0 * f
        if self.o2i == "low":
            wall = 5.0 - 10.0 * math.log10(0.3 * 10 ** (-glass / 10) + 0.7 * 10 ** (-concrete / 10))
            sigma = 4.4
        else:
            irr_glass = 23.0 + 0.3 * f
            wall = 5.0 - 10.0 * math.log10(0.7 * 10 ** (-irr_glass / 10)
                                           + 0.3 * 10 ** (-concrete / 10))
            sigma = 6.5
        return np.asarray(wall + 0.5 * np.asarray(d_in_m) + sigma * np.asarray(z))


def _breakpoint_m(h_bs_m: float, h_ut_m: float, f_hz: float, h_e_m: float = 1.0) -> float:
    """The breakpoint distance d'_BP = 4 h'_BS h'_UT f_c / c (effective heights)."""
    return 4.0 * (h_bs_m - h_e_m) * (h_ut_m - h_e_m) * f_hz / SPEED_OF_LIGHT_MPS


@dataclass(frozen=True)
class Uma(Tr38901):
    """3GPP TR 38.901 urban macro (UMa): 25 m sites, LoS by distance and client height."""

    kind = "uma"
    paper = f"{_SOURCE}, Tables 7.4.1-1 and 7.4.2-1 (UMa)"
    h_bs_range_m: ClassVar[tuple[float, float]] = (25.0, 25.0)
    h_ut_range_m: ClassVar[tuple[float, float]] = (1.5, 22.5)
    sigma_los_db: ClassVar[float] = 4.0
    sigma_nlos_db: ClassVar[float] = 6.0
    h_bs_m: float = 25.0

    def los_probability(self, d2d_m: np.ndarray) -> np.ndarray:
        d = np.maximum(d2d_m, 1e-9)
        c = 0.0 if self.h_ut_m <= 13.0 else ((self.h_ut_m - 13.0) / 10.0) ** 1.5
        far = (18.0 / d + np.exp(-d / 63.0) * (1.0 - 18.0 / d)) * (
            1.0 + c * 1.25 * (d / 100.0) ** 3 * np.exp(-d / 150.0))
        return np.asarray(np.where(d <= 18.0, 1.0, far))

    def los_db(self, d2d_m: np.ndarray) -> np.ndarray:
        return self._two_slope_db(d2d_m, 28.0, 22.0, 9.0)

    def nlos_db(self, d2d_m: np.ndarray) -> np.ndarray:
        d3, f = self.d3d_m(d2d_m), self.f_ghz
        own = 13.54 + 39.08 * _log10(d3) + 20.0 * math.log10(f) - 0.6 * (self.h_ut_m - 1.5)
        return np.asarray(np.maximum(self.los_db(d2d_m), own))


@dataclass(frozen=True)
class Umi(Tr38901):
    """3GPP TR 38.901 urban micro, street canyon (UMi): 10 m sites below the rooftops."""

    kind = "umi"
    paper = f"{_SOURCE}, Tables 7.4.1-1 and 7.4.2-1 (UMi - Street Canyon)"
    h_bs_range_m: ClassVar[tuple[float, float]] = (10.0, 10.0)
    h_ut_range_m: ClassVar[tuple[float, float]] = (1.5, 22.5)
    sigma_los_db: ClassVar[float] = 4.0
    sigma_nlos_db: ClassVar[float] = 7.82

    def los_probability(self, d2d_m: np.ndarray) -> np.ndarray:
        d = np.maximum(d2d_m, 1e-9)
        return np.asarray(np.where(d <= 18.0, 1.0, 18.0 / d + np.exp(-d / 36.0) * (1.0 - 18.0 / d)))

    def los_db(self, d2d_m: np.ndarray) -> np.ndarray:
        return self._two_slope_db(d2d_m, 32.4, 21.0, 9.5)

    def nlos_db(self, d2d_m: np.ndarray) -> np.ndarray:
        d3, f = self.d3d_m(d2d_m), self.f_ghz
        own = 35.3 * _log10(d3) + 22.4 + 21.3 * math.log10(f) - 0.3 * (self.h_ut_m - 1.5)
        return np.asarray(np.maximum(self.los_db(d2d_m), own))


@dataclass(frozen=True)
class Rma(Tr38901):
    """3GPP TR 38.901 rural macro (RMa): 35 m sites, 5 m buildings, 20 m wide streets."""

    kind = "rma"
    paper = f"{_SOURCE}, Tables 7.4.1-1 and 7.4.2-1 (RMa)"
    freq_range_hz: ClassVar[tuple[float, float]] = (0.5e9, 30e9)
    h_bs_range_m: ClassVar[tuple[float, float]] = (10.0, 150.0)
    h_ut_range_m: ClassVar[tuple[float, float]] = (1.0, 10.0)
    max_indoor_m: ClassVar[float] = 10.0
    sigma_los_db: ClassVar[float] = 4.0  # below the breakpoint; 6 dB beyond it
    sigma_nlos_db: ClassVar[float] = 8.0
    h_bs_m: float = 35.0
    building_m: float = 5.0
    street_m: float = 20.0

    def validate(self) -> None:
        super().validate()
        for name, lo, hi in (("building_m", 5.0, 50.0), ("street_m", 5.0, 50.0)):
            require(lo <= getattr(self, name) <= hi, name, getattr(self, name),
                    f"{lo:g} to {hi:g} m for rma ({_SOURCE})")

    def _breakpoint(self) -> float:
        return 2.0 * math.pi * self.h_bs_m * self.h_ut_m * self.carrier_hz / SPEED_OF_LIGHT_MPS

    def _pl1(self, d3: np.ndarray) -> np.ndarray:
        h, f = self.building_m, self.f_ghz
        return np.asarray(20.0 * _log10(40.0 * math.pi * d3 * f / 3.0)
                          + min(0.03 * h ** 1.72, 10.0) * _log10(d3)
                          - min(0.044 * h ** 1.72, 14.77) + 0.002 * math.log10(h) * d3)

    def los_probability(self, d2d_m: np.ndarray) -> np.ndarray:
        return np.asarray(np.where(d2d_m <= 10.0, 1.0, np.exp(-(d2d_m - 10.0) / 1000.0)))

    def los_db(self, d2d_m: np.ndarray) -> np.ndarray:
        bp = self._breakpoint()
        near = self._pl1(self.d3d_m(d2d_m))
        far = self._pl1(self.d3d_m(np.asarray(bp))) + 40.0 * _log10(self.d3d_m(d2d_m) / self.d3d_m(
            np.asarray(bp)))
        return np.asarray(np.where(d2d_m <= bp, near, far))

    def nlos_db(self, d2d_m: np.ndarray) -> np.ndarray:
        d3, f, h, w, hb = self.d3d_m(d2d_m), self.f_ghz, self.building_m, self.street_m, self.h_bs_m
        own = (161.04 - 7.1 * math.log10(w) + 7.5 * math.log10(h)
               - (24.37 - 3.7 * (h / hb) ** 2) * math.log10(hb)
               + (43.42 - 3.1 * math.log10(hb)) * (_log10(d3) - 3.0)
               + 20.0 * math.log10(f) - (3.2 * math.log10(11.75 * self.h_ut_m) ** 2 - 4.97))
        return np.asarray(np.maximum(self.los_db(d2d_m), own))

    def pair_sigma_db(self, d2d_m: np.ndarray, los: np.ndarray) -> np.ndarray:
        beyond = np.asarray(d2d_m) > self._breakpoint()
        return np.asarray(np.where(los, np.where(beyond, 6.0, self.sigma_los_db),
                                   self.sigma_nlos_db))


@dataclass(frozen=True)
class Inh(Tr38901):
    """3GPP TR 38.901 indoor hotspot, mixed office (InH): 3 m ceiling-mounted sites."""

    kind = "inh"
    paper = f"{_SOURCE}, Tables 7.4.1-1 and 7.4.2-1 (InH - Office, mixed)"
    h_bs_range_m: ClassVar[tuple[float, float]] = (3.0, 3.0)
    h_ut_range_m: ClassVar[tuple[float, float]] = (1.0, 2.5)
    min_distance_m: ClassVar[float] = 1.0
    sigma_los_db: ClassVar[float] = 3.0
    sigma_nlos_db: ClassVar[float] = 8.03
    h_bs_m: float = 3.0
    h_ut_m: float = 1.0

    def validate(self) -> None:
        super().validate()
        require(self.indoor_fraction == 0.0, "indoor_fraction", self.indoor_fraction,
                "0 for inh (every client is already indoors)")

    def los_probability(self, d2d_m: np.ndarray) -> np.ndarray:
        d = np.asarray(d2d_m, dtype=float)
        mid = np.exp(-(d - 1.2) / 4.7)
        far = np.exp(-(d - 6.5) / 32.6) * 0.32
        return np.asarray(np.where(d <= 1.2, 1.0, np.where(d < 6.5, mid, far)))

    def los_db(self, d2d_m: np.ndarray) -> np.ndarray:
        return np.asarray(32.4 + 17.3 * _log10(self.d3d_m(d2d_m)) + 20.0 * math.log10(self.f_ghz))

    def nlos_db(self, d2d_m: np.ndarray) -> np.ndarray:
        own = 38.3 * _log10(self.d3d_m(d2d_m)) + 17.30 + 24.9 * math.log10(self.f_ghz)
        return np.asarray(np.maximum(self.los_db(d2d_m), own))
