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

import numpy as np

from simfl.core.config.checks import finite, non_negative, positive, require
from simfl.core.config.fading import Fading, NoFading
from simfl.core.config.node import Choice, Node
from simfl.core.config.radio_link import RadioLinkModel, ShannonLink

#: speed of light (m/s), for free-space path loss
SPEED_OF_LIGHT_MPS = 299_792_458.0
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
    ``shadowing_corr_m`` as above, and ``shadowing_db`` stays 0. ``link`` turns an
    attempt's SINR into its rate and loss: ``shannon`` (the capacity; the default) or
    ``nr`` (NR MCS, block errors and HARQ).
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
    link: RadioLinkModel = ShannonLink()

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
