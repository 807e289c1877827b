"""A band shared by the uploads of one cell: rates on a share, splits, min-latency allocation.

A client that the access point receives at mean power ``P g`` over noise of spectral
density ``N0`` has, on ``b`` Hz of the band, the rate ``b log2(1 + a / b)`` with
``a = P g / N0`` (Hz): the noise grows with the share, so the rate rises with ``b`` toward
``a / ln 2`` and never beyond. The schedulers' splits are fractions of the band, one per
active upload, summing to at most 1; with resource blocks they are whole blocks.
"""

from __future__ import annotations

import math

import numpy as np

#: bisection steps of the min-latency split (the bracket shrinks 2^-100: past the float)
BISECTION_STEPS = 100


def share_rate_bps(b_hz: np.ndarray | float, a_hz: np.ndarray | float) -> np.ndarray:
    """Rate (bit/s) on ``b_hz`` of band of a client with ``a_hz = P g / N0``; 0 on no band."""
    b = np.asarray(b_hz, dtype=float)
    a = np.asarray(a_hz, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = b * np.log2(1.0 + a / b)
    return np.where(b > 0, rate, 0.0)


def min_latency_fixed_se(bits: np.ndarray, se_bps_hz: np.ndarray, band_hz: float
                         ) -> tuple[float, np.ndarray]:
    """The split of ``band_hz`` under which uploads of ``bits`` at fixed spectral
    efficiencies ``se_bps_hz`` finish together: ``T = sum(S / se) / B``, ``b = S / (T se)``.
    Returns (T in s, b in Hz)."""
    need = np.asarray(bits, dtype=float) / np.asarray(se_bps_hz, dtype=float)
    t_s = float(need.sum() / band_hz)
    return t_s, need / t_s


def band_for_rate(rate_bps: np.ndarray, a_hz: np.ndarray) -> np.ndarray:
    """The band each client needs for ``rate_bps`` (power-limited: noise grows with the
    band); ``inf`` where the rate is at or above the ceiling ``a / ln 2``."""
    rate = np.asarray(rate_bps, dtype=float)
    a = np.asarray(a_hz, dtype=float)
    reachable = rate < a / math.log(2.0)
    # the rate is increasing in b: bisect between 0 and an upper end that carries it
    hi = np.where(reachable, np.maximum(rate, 1.0), np.inf)
    while True:
        short = reachable & (share_rate_bps(hi, a) < rate)
        if not short.any():
            break
        hi = np.where(short, hi * 4.0, hi)
    lo = np.zeros_like(hi)
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        above = share_rate_bps(mid, a) >= rate
        hi = np.where(reachable & above, mid, hi)
        lo = np.where(reachable & ~above, mid, lo)
    return np.where(reachable, hi, np.inf)


def min_latency_split(bits: np.ndarray, a_hz: np.ndarray, band_hz: float
                      ) -> tuple[float, np.ndarray]:
    """The split of ``band_hz`` under which uploads of ``bits`` by clients with
    ``a_hz = P g / N0`` finish together (noise grows with each share): T solves
    ``sum_k b_k(T) = B`` with ``b_k(T) log2(1 + a_k / b_k(T)) = S_k / T``, by bisection.
    Every client with ``a > 0`` can be served (T is above each ``S_k ln 2 / a_k``).
    Returns (T in s, b in Hz)."""
    s = np.asarray(bits, dtype=float)
    a = np.asarray(a_hz, dtype=float)
    lo = float(np.max(s * math.log(2.0) / a))  # below: some client needs infinite band
    hi = max(lo, 1e-12) * 2.0
    while band_for_rate(s / hi, a).sum() > band_hz:
        hi *= 2.0
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if band_for_rate(s / mid, a).sum() > band_hz:
            lo = mid
        else:
            hi = mid
    b = band_for_rate(s / hi, a)
    return hi, b


def whole_blocks(fractions: np.ndarray, blocks: int) -> np.ndarray:
    """``fractions`` (summing to at most 1) rounded to whole blocks of ``blocks`` by the
    largest remainder (ties to the lower index); returns fractions of whole blocks."""
    want = np.asarray(fractions, dtype=float) * blocks
    count = np.floor(want + 1e-9)
    left = int(round(min(float(np.sum(fractions)), 1.0) * blocks - count.sum()))
    if left > 0:
        order = np.argsort(-(want - count), kind="stable")[:left]
        count[order] += 1
    return count / blocks
