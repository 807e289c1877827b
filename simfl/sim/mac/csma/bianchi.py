"""Bianchi's fixed point: the saturation throughput of n IEEE 802.11 DCF stations.

Each of n saturated stations transmits in a slot with probability tau and collides with
probability p, where (W the minimum window, m the number of doublings)

    tau = 2 / ((W + 1) + p W sum_{i<m} (2p)^i)        (= 2(1-2p) / ((1-2p)(W+1) + pW(1-(2p)^m)))
    p = 1 - (1 - tau)^(n-1)

The sum form has no pole at p = 1/2. The throughput is then

    S = P_s P_tr E[P] / ((1 - P_tr) sigma + P_tr P_s T_s + P_tr (1 - P_s) T_c)

with P_tr = 1 - (1 - tau)^n and P_s = n tau (1 - tau)^(n-1) / P_tr. The model assumes
saturation, an ideal channel and no retry limit.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from simfl.sim.mac.csma.timing import DcfTiming


class FixedPoint(NamedTuple):
    tau: float
    p: float


def tau_of(p: float, window: int, stages: int) -> float:
    """The transmission probability of a station that collides with probability ``p``."""
    backoff_sum = sum((2.0 * p) ** i for i in range(stages))
    return 2.0 / ((window + 1) + p * window * backoff_sum)


def fixed_point(n: int, window: int, stages: int, tol: float = 1e-15) -> FixedPoint:
    """Solve tau(p) and p = 1 - (1 - tau)^(n-1) for ``n`` stations (bisection on p).

    g(p) = 1 - (1 - tau(p))^(n-1) - p falls strictly from g(0) >= 0 to g(1) < 0.
    """
    if n < 1:
        raise ValueError(f"n = {n}: need at least one station")

    def g(p: float) -> float:
        return 1.0 - (1.0 - tau_of(p, window, stages)) ** (n - 1) - p

    lo, hi = 0.0, 1.0
    if g(lo) <= 0.0:  # n = 1: nobody to collide with
        return FixedPoint(tau_of(0.0, window, stages), 0.0)
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if g(mid) > 0.0:
            lo = mid
        else:
            hi = mid
    p = 0.5 * (lo + hi)
    return FixedPoint(tau_of(p, window, stages), p)


def stages_of(cw_min: int, cw_max: int) -> int:
    """m: how many times the window doubles from ``cw_min`` before it reaches ``cw_max``."""
    return max(0, round(math.log2(cw_max / cw_min)))


def throughput(n: int, window: int, stages: int, timing: DcfTiming,
               payload_bits: float) -> float:
    """Bianchi's normalised saturation throughput S of ``n`` stations (fraction of the
    channel's time that carries payload), every MPDU ``payload_bits`` long."""
    tau, _ = fixed_point(n, window, stages)
    p_tr = 1.0 - (1.0 - tau) ** n
    p_s = n * tau * (1.0 - tau) ** (n - 1) / p_tr
    t_s = timing.success_busy_s(payload_bits) + timing.difs_s
    t_c = timing.collision_busy_s(payload_bits) + timing.difs_s
    mean_slot_s = (1 - p_tr) * timing.slot_s + p_tr * p_s * t_s + p_tr * (1 - p_s) * t_c
    return p_s * p_tr * timing.payload_s(payload_bits) / mean_slot_s
