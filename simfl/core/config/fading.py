"""Small-scale fading on the shared radio: the power gain's law and its memory in time.

A client's fading power gain |h|^2 has mean 1 and multiplies its mean SNR from geometry.
Its memory is set by one of two fields: ``coherence_s`` (block fading: one draw per
client, direction and window of that many seconds; ``0`` draws afresh for every
attempt) or ``doppler_hz`` (a Gauss-Markov complex gain h[t + tau] = rho h[t] +
sqrt(1 - rho^2) w with Jakes' rho = J0(2 pi f_d tau), advanced at the events that use it).
"""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.checks import finite, non_negative, positive, require
from simfl.core.config.node import Choice

#: largest Doppler shift accepted (Hz): a train at 500 km/h on 60 GHz is about 28 kHz
MAX_DOPPLER_HZ = 1e5
#: shortest coherence time of block fading (s): a microsecond, far below any channel's
#: (milliseconds); shorter windows would be numbered past what an index can hold
MIN_COHERENCE_S = 1e-6


@dataclass(frozen=True)
class Fading(Choice, point="fading"):
    """The law of the fading power gain and its memory (``coherence_s`` or ``doppler_hz``)."""

    exclusive = (("coherence_s", "doppler_hz"),)
    coherence_s: float = 0.0
    doppler_hz: float | None = None

    def validate(self) -> None:
        non_negative(self, "coherence_s")
        finite(self, "coherence_s")
        require(self.coherence_s == 0.0 or self.coherence_s >= MIN_COHERENCE_S, "coherence_s",
                self.coherence_s, f"0 (a fresh draw per attempt) or a coherence time >= "
                f"{MIN_COHERENCE_S:g} s")
        positive(self, "doppler_hz")
        if self.doppler_hz is not None:
            require(self.doppler_hz <= MAX_DOPPLER_HZ, "doppler_hz", self.doppler_hz,
                    f"a Doppler shift in (0, {MAX_DOPPLER_HZ:g}] Hz")
            require(self.coherence_s == 0.0, "coherence_s", self.coherence_s,
                    "0 when doppler_hz is set (one memory model at a time)")


@dataclass(frozen=True)
class NoFading(Fading):
    """No small-scale fading: every attempt sees the mean SNR from geometry."""

    kind = "none"


@dataclass(frozen=True)
class RayleighFading(Fading):
    """Rayleigh fading: |h|^2 ~ Exp(1) (no line of sight)."""

    kind = "rayleigh"
    paper = ("Tse and Viswanath, Fundamentals of Wireless Communication, Cambridge "
             "University Press 2005, ch. 2; Jakes, Microwave Mobile Communications, 1974")


@dataclass(frozen=True)
class RicianFading(Fading):
    """Rician fading with factor ``k_factor`` (line-of-sight to scattered power, linear)."""

    kind = "rician"
    paper = "Rice, Statistical properties of a sine wave plus random noise, BSTJ 27, 1948"
    k_factor: float = 3.0

    def validate(self) -> None:
        super().validate()
        non_negative(self, "k_factor")
        finite(self, "k_factor")
