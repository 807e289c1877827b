"""The shared radio: access points, transmit power, path loss, shadowing, noise and fading.

With ``network.radio`` set, every client's mean SNR comes from geometry: its position
(``population.placement``), the access point that serves it (``network.cells``), its
transmit power, the path loss and its shadowing. Received power in dBm is
``P_tx - PL(d) - X`` with X ~ N(0, shadowing_db^2) drawn once per client and access point;
the noise power over the band is ``-174 + 10 log10(bandwidth_hz) + noise_figure_db`` dBm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from simfl.core.config.checks import finite, non_negative, positive, require
from simfl.core.config.fading import Fading, NoFading
from simfl.core.config.node import Choice, Node

#: speed of light (m/s), for free-space path loss
SPEED_OF_LIGHT_MPS = 299_792_458.0
#: the most access points a scenario may list
MAX_ACCESS_POINTS = 10_000
#: transmit powers accepted (dBm): from a microwatt to a kilowatt
MIN_POWER_DBM, MAX_POWER_DBM = -30.0, 60.0
#: largest shadowing correlation distance (m): ten times the largest placement's extent
MAX_CORR_M = 1e7
#: largest path-loss constant (dB) and carrier frequency (Hz): beyond, 10^(dB/10) of a
#: link's SNR leaves the floating-point range
MAX_LOSS_DB, MAX_FREQ_HZ = 300.0, 1e12


@dataclass(frozen=True)
class PathLoss(Choice, point="path_loss"):
    """Mean loss in dB between a transmitter and a receiver ``d_m`` metres apart."""

    def loss_db(self, d_m: np.ndarray) -> np.ndarray:
        """The mean loss (dB) at each distance of ``d_m`` (metres)."""
        raise NotImplementedError


@dataclass(frozen=True)
class LogDistance(PathLoss):
    """Log-distance path loss.

    PL(d) = ref_loss_db + 10 exponent log10(max(d, ref_m) / ref_m): closer than ``ref_m``
    the loss stays at ``ref_loss_db``."""

    kind = "log_distance"
    paper = "Rappaport, Wireless Communications: Principles and Practice, 2nd ed., sec. 4.9"
    exponent: float = 3.5
    ref_m: float = 1.0
    ref_loss_db: float = 40.0

    def validate(self) -> None:
        positive(self, "exponent", "ref_m")
        finite(self, "exponent", "ref_m", "ref_loss_db")
        require(abs(self.ref_loss_db) <= MAX_LOSS_DB, "ref_loss_db", self.ref_loss_db,
                f"a loss in [-{MAX_LOSS_DB:g}, {MAX_LOSS_DB:g}] dB")

    def loss_db(self, d_m: np.ndarray) -> np.ndarray:
        ratio = np.maximum(np.asarray(d_m, dtype=float), self.ref_m) / self.ref_m
        return np.asarray(self.ref_loss_db + 10.0 * self.exponent * np.log10(ratio))


@dataclass(frozen=True)
class FreeSpace(PathLoss):
    """Free-space path loss (Friis).

    PL(d) = 20 log10(4 pi d f / c), with d at least one wavelength."""

    kind = "free_space"
    paper = "Friis, A note on a simple transmission formula, Proc. IRE 34, 1946"
    freq_hz: float = 2.4e9

    def validate(self) -> None:
        positive(self, "freq_hz")
        finite(self, "freq_hz")
        require(self.freq_hz <= MAX_FREQ_HZ, "freq_hz", self.freq_hz,
                f"a carrier frequency in (0, {MAX_FREQ_HZ:g}] Hz")

    def loss_db(self, d_m: np.ndarray) -> np.ndarray:
        d_m = np.maximum(np.asarray(d_m, dtype=float), SPEED_OF_LIGHT_MPS / self.freq_hz)
        return np.asarray(20.0 * np.log10(4.0 * math.pi * d_m * self.freq_hz
                                          / SPEED_OF_LIGHT_MPS))


@dataclass(frozen=True)
class PowerControl(Choice, point="power_control"):
    """How a client sets its transmit power, at most ``network.radio.tx_power_dbm``."""


@dataclass(frozen=True)
class FixedPower(PowerControl):
    """Every client transmits at ``tx_power_dbm``."""

    kind = "fixed"


@dataclass(frozen=True)
class ChannelInversion(PowerControl):
    """Channel inversion, capped at the maximum power.

    Each client inverts its mean path gain to reach ``target_snr_db`` at its access point,
    at most ``tx_power_dbm`` (a client that needs more falls short of the target)."""

    kind = "inversion"
    target_snr_db: float = 10.0

    def validate(self) -> None:
        finite(self, "target_snr_db")


@dataclass(frozen=True)
class TruncatedInversion(PowerControl):
    """Truncated channel inversion: clients that would need too much power stay silent.

    Channel inversion to ``target_snr_db``; a client that would need more than
    ``tx_power_dbm`` does not transmit at all (its uploads are lost)."""

    kind = "truncated_inversion"
    target_snr_db: float = 10.0

    def validate(self) -> None:
        finite(self, "target_snr_db")


#: one NR resource block: 12 subcarriers of 15 kHz (TS 38.211 section 4.4.4.1), in Hz
RB_BANDWIDTH_HZ = 180e3
#: the range of the nominal target power p0-NominalPUSCH in TS 38.331 (dBm per block)
MIN_P0_DBM, MAX_P0_DBM = -202.0, 24.0


@dataclass(frozen=True)
class FractionalPower(PowerControl):
    """NR open-loop fractional power control of the uplink.

    P = min(P_max, p0_dbm + 10 log10(M_RB) + alpha PL) dBm, where P_max is the client's
    ``tx_power_dbm``, PL its mean path loss toward its access point (path loss and
    shadowing, in dB) and M_RB the resource blocks it transmits on: the whole band in
    blocks of ``rb_bandwidth_hz``, floor(bandwidth_hz / rb_bandwidth_hz), at least 1.
    ``p0_dbm`` is the received power aimed at per block with full compensation;
    ``alpha`` in [0, 1] is the share of the path loss compensated (0: everyone at p0 +
    10 log10 M_RB; 1: every client received at the same power). Defaults: alpha 0.8
    with p0 -90 dBm, a partial-compensation operating point typical of system-level
    studies of LTE and NR uplinks; blocks of 180 kHz (12 subcarriers at 15 kHz). The
    power is set once from the mean path loss (open loop, no closed-loop corrections)
    and held whatever share of the band a shared MAC gives the client.
    """

    kind = "fractional"
    paper = "3GPP TS 38.213, Physical layer procedures for control, section 7.1.1 (PUSCH)"
    p0_dbm: float = -90.0
    alpha: float = 0.8
    rb_bandwidth_hz: float = RB_BANDWIDTH_HZ

    def validate(self) -> None:
        finite(self, "p0_dbm", "alpha", "rb_bandwidth_hz")
        require(0.0 <= self.alpha <= 1.0, "alpha", self.alpha,
                "a path-loss compensation factor in [0, 1]")
        require(MIN_P0_DBM <= self.p0_dbm <= MAX_P0_DBM, "p0_dbm", self.p0_dbm,
                f"a target power in [{MIN_P0_DBM:g}, {MAX_P0_DBM:g}] dBm per resource block")
        positive(self, "rb_bandwidth_hz")

    def resource_blocks(self, bandwidth_hz: float) -> int:
        """M_RB: the whole band of ``bandwidth_hz`` in whole blocks, at least one."""
        return max(1, math.floor(bandwidth_hz / self.rb_bandwidth_hz * (1.0 + 1e-12)))


#: a sector antenna's horizontal half-power beamwidth (degrees), its front-to-back limit
#: and its boresight gain (dB, dBi): the element of 3GPP TR 38.901 Table 7.3-1
SECTOR_BEAMWIDTH_DEG, SECTOR_MAX_ATTENUATION_DB, SECTOR_GAIN_DBI = 65.0, 30.0, 8.0


@dataclass(frozen=True)
class Hexagonal(Node):
    """A hexagonal layout of sites: one at the origin and ``rings`` rings around it
    (1, 7, 19, 37 or 61 sites), ``isd_m`` apart, each with 1 site antenna or 3 sectors
    (boresights 30, 150 and 270 degrees from the x axis, the 3GPP TR 38.901 element
    pattern's horizontal cut: 8 dBi at boresight, -12 (phi / 65 deg)^2 dB off it, at most
    30 dB below). With ``wraparound`` (and at least one ring), a client reaches each site
    through the nearest of its seven images (the layout repeated around itself), so the
    edge cells see the same surroundings as the centre."""

    rings: int = 1
    isd_m: float = 500.0
    sectors: int = 1
    wraparound: bool = True

    def validate(self) -> None:
        require(0 <= self.rings <= 4, "rings", self.rings, "0 to 4 rings (1 to 61 sites)")
        require(self.sectors in (1, 3), "sectors", self.sectors, "1 or 3 sectors per site")
        finite(self, "isd_m")
        require(20.0 <= self.isd_m <= 1e5, "isd_m", self.isd_m,
                "an inter-site distance of 20 m to 100 km (twice the 10 m minimum distance of "
                "the outdoor path-loss models and more)")

    def sites_m(self) -> list[tuple[float, float]]:
        """The sites' positions: the origin, then ring by ring."""
        a1, a2 = (self.isd_m, 0.0), (self.isd_m / 2, self.isd_m * math.sqrt(3) / 2)
        sites = []
        for i in range(-self.rings, self.rings + 1):
            for j in range(-self.rings, self.rings + 1):
                if max(abs(i), abs(j), abs(i + j)) <= self.rings:  # hexagonal distance
                    sites.append((max(abs(i), abs(j), abs(i + j)), i, j))
        return [(i * a1[0] + j * a2[0], i * a1[1] + j * a2[1]) for _, i, j in sorted(sites)]

    def boresights_deg(self) -> list[float | None]:
        """Each access point's boresight (None: a site antenna without a pattern)."""
        per_site = [30.0, 150.0, 270.0] if self.sectors == 3 else [None]
        return [b for _ in self.sites_m() for b in per_site]

    def images_m(self) -> list[tuple[float, float]]:
        """The offsets of the layout's copies around itself (the first is no offset): the
        cluster of N = i^2 + ij + j^2 sites repeats at i a1 + j a2 and its 60-degree turns."""
        if not self.wraparound or self.rings == 0:
            return [(0.0, 0.0)]
        i, j = self.rings + 1, self.rings
        x = self.isd_m * (i + j / 2)
        y = self.isd_m * j * math.sqrt(3) / 2
        turns = [(math.cos(k * math.pi / 3), math.sin(k * math.pi / 3)) for k in range(6)]
        return [(0.0, 0.0)] + [(c * x - s * y, s * x + c * y) for c, s in turns]


def sector_gain_db(angle_deg: np.ndarray) -> np.ndarray:
    """The sector antenna's gain (dBi) at ``angle_deg`` off its boresight."""
    off = (np.asarray(angle_deg) + 180.0) % 360.0 - 180.0
    return np.asarray(SECTOR_GAIN_DBI - np.minimum(12.0 * (off / SECTOR_BEAMWIDTH_DEG) ** 2,
                                                   SECTOR_MAX_ATTENUATION_DB))


@dataclass(frozen=True)
class Cells(Node):
    """Access points at ``[x_m, y_m]`` positions, and how a client picks the one that
    serves it: the ``nearest``, or the ``strongest`` (highest mean received power,
    shadowing included). ``hexagonal`` lays the access points out as a hexagonal grid of
    sites (the list is then derived from it); a sectored client picks, among the sectors
    of its nearest site, the one facing it."""

    access_points: tuple[tuple[float, ...], ...] = ((0.0, 0.0),)
    association: Literal["nearest", "strongest"] = "nearest"
    hexagonal: Hexagonal | None = None

    def validate(self) -> None:
        if self.hexagonal is not None:
            layout = [(x, y) for x, y in self.hexagonal.sites_m()
                      for _ in range(self.hexagonal.sectors)]
            given = [tuple(p) for p in self.access_points]
            require(given in ([(0.0, 0.0)], layout), "access_points", list(self.access_points),
                    "no list of its own with network.cells.hexagonal (the layout places them)")
            self._set_default("access_points", tuple(layout))
        points = self.access_points
        require(0 < len(points) <= MAX_ACCESS_POINTS, "access_points", list(points),
                f"a list of 1 to {MAX_ACCESS_POINTS} [x_m, y_m] positions")
        for i, point in enumerate(points):
            require(len(point) == 2 and all(math.isfinite(v) for v in point),
                    f"access_points[{i}]", list(point), "a position [x_m, y_m] of finite numbers")

    def boresights_deg(self) -> list[float | None]:
        """Each access point's boresight in degrees (None: no antenna pattern)."""
        if self.hexagonal is None:
            return [None] * len(self.access_points)
        return self.hexagonal.boresights_deg()

    def images_m(self) -> list[tuple[float, float]]:
        """The wraparound offsets of the layout (just no offset without one)."""
        return [(0.0, 0.0)] if self.hexagonal is None else self.hexagonal.images_m()


@dataclass(frozen=True)
class Radio(Node):
    """The shared radio's physical layer: power, band, noise, path loss, shadowing, fading.

    ``tx_power_dbm`` is the clients' maximum power: one for all, or a list with one per
    client (``task.n_clients`` entries).

    ``shadowing_corr_m`` > 0 correlates the shadowing of nearby clients (toward the
    same access point) with rho(delta) = exp(-delta / shadowing_corr_m); 0 draws it
    independently. ``ap_tx_power_dbm`` is the access points' power on the downlink.
    With a 3GPP TR 38.901 path loss (``uma``, ``umi``, ``rma``, ``inh``) the shadowing is
    the scenario's own (its LoS and NLoS standard deviations), correlated by
    ``shadowing_corr_m`` as above, and ``shadowing_db`` stays 0.
    Not modelled: antenna patterns, frequency-selective fading.
    """

    tx_power_dbm: float | tuple[float, ...] = 23.0
    power_control: PowerControl = FixedPower()
    ap_tx_power_dbm: float = 30.0
    bandwidth_hz: float = 1e6
    noise_figure_db: float = 7.0
    path_loss: PathLoss = LogDistance()
    shadowing_db: float = 0.0
    shadowing_corr_m: float = 0.0
    fading: Fading = NoFading()

    def validate(self) -> None:
        powers = self.tx_power_dbm if isinstance(self.tx_power_dbm, tuple) else (
            self.tx_power_dbm,)
        require(len(powers) > 0, "tx_power_dbm", [], "a power, or one power per client")
        for name, values in (("tx_power_dbm", powers),
                             ("ap_tx_power_dbm", (self.ap_tx_power_dbm,))):
            require(all(MIN_POWER_DBM <= v <= MAX_POWER_DBM for v in values), name,
                    getattr(self, name), f"powers in [{MIN_POWER_DBM:g}, {MAX_POWER_DBM:g}] dBm")
        positive(self, "bandwidth_hz")
        require(1.0 <= self.bandwidth_hz <= 1e12, "bandwidth_hz", self.bandwidth_hz,
                "a bandwidth in [1, 1e12] Hz")
        non_negative(self, "noise_figure_db", "shadowing_db", "shadowing_corr_m")
        require(self.noise_figure_db <= 100.0, "noise_figure_db", self.noise_figure_db,
                "a noise figure in [0, 100] dB")
        require(self.shadowing_db <= 30.0, "shadowing_db", self.shadowing_db,
                "a standard deviation in [0, 30] dB")
        finite(self, "shadowing_corr_m")
        require(self.shadowing_corr_m <= MAX_CORR_M, "shadowing_corr_m", self.shadowing_corr_m,
                f"a correlation distance in [0, {MAX_CORR_M:g}] m (0: independent shadowing)")
        if hasattr(self.path_loss, "pair_sigma_db"):  # a 3GPP TR 38.901 scenario
            require(self.shadowing_db == 0.0, "shadowing_db", self.shadowing_db,
                    f"0 with path_loss {self.path_loss.kind}: the scenario's own shadow "
                    "fading (LoS and NLoS standard deviations) applies")

    @property
    def noise_dbm(self) -> float:
        """Thermal noise over the band plus the receiver's noise figure (dBm)."""
        return -174.0 + 10.0 * math.log10(self.bandwidth_hz) + self.noise_figure_db
