"""Draws of many upload attempts at once, for the links' cohort form
(:meth:`simfl.sim.links.channel.Link.cohort_attempts`)."""

from __future__ import annotations

import math

import numpy as np

from simfl.core.config.network import ShannonRate


def power_gains(k_factor: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` block-fading power gains of mean 1: Exp(1) (Rayleigh) for ``k_factor`` 0, else
    Rician with that line-of-sight to scattered power ratio (linear)."""
    if k_factor == 0:
        return rng.standard_exponential(n)
    x, y = rng.standard_normal((2, n))
    los, spread = math.sqrt(k_factor / (k_factor + 1.0)), math.sqrt(0.5 / (k_factor + 1.0))
    return np.asarray((los + spread * x) ** 2 + (spread * y) ** 2)


def shannon_airtimes_s(rate: ShannonRate, n_bytes: int, rate_snr: np.ndarray) -> np.ndarray:
    """The airtime of ``n_bytes`` at the capacity of each linear SNR in ``rate_snr``
    (infinite where the capacity is 0)."""
    rate_bps = rate.efficiency * rate.bandwidth_hz * np.log2(1.0 + rate_snr)
    airtime_s = np.full(rate_snr.shape, math.inf)
    np.divide(n_bytes * 8.0, rate_bps, out=airtime_s, where=rate_bps > 0)
    return airtime_s
