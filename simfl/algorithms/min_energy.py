"""The round's least energy under its deadline: band shares and DVFS clocks, a round policy.

Client k (of the candidates) must download (``download_s_k``), compute and upload S bits
by the deadline T. On a fraction f of its cell's band its upload takes
``u_k(f) = S / r_k(f)``, with ``r_k(f) = f R_k`` without a radio (R_k its link's rate) or
``r_k(f) = f B log2(1 + a_k / (f B))`` on the radio (a_k = P_k g_k / N0: its power times
mean path gain over the noise density; P_k its power now). Its radio draws w watts
(``tx_w``) while it holds its share, so the upload costs ``w u_k(f)``. With DVFS it computes
its C_k cycles at the slowest clock that still finishes in time,
``phi_k = C_k / (T_k - u_k)`` with ``T_k = T - download_s_k``, which costs
``kappa C_k phi_k^2 = kappa C_k^3 / (T_k - u_k)^2``; without DVFS computing costs the same
whatever the shares. So each client's energy is

    E_k(f) = w u_k(f) + kappa C_k^3 / (T_k - u_k(f))^2      (the second term with DVFS)

and the policy solves, in each cell,

    minimise sum_k E_k(f_k)  subject to  sum_k f_k <= 1,  f_k >= fmin_k,

where fmin_k is the share on which the upload ends just in time (computing at the
client's own clock: ``u_k(fmin_k) = T_k - compute``). u_k is convex and decreasing in f
(r_k is concave and increasing) and E_k is convex and increasing in u (for u < T_k),
so E_k is convex and decreasing in f: the problem is convex, the band is used up, and
its KKT conditions say that with a multiplier lambda > 0 every client either sits at its
least share or has marginal saving -E_k'(f_k) = lambda:

    f_k(lambda) = fmin_k                  if -E_k'(fmin_k) <= lambda,
                  the root of -E_k'(f) = lambda   otherwise,

with ``-E_k'(f) = (w + 2 kappa C_k^3 / (T_k - u_k)^3) S r_k'(f) / r_k(f)^2``, decreasing in
f. ``sum_k f_k(lambda)`` falls as lambda grows: bisection on lambda finds the sum 1
(each f_k(lambda) by bisection too). Without DVFS and without a radio it is the closed
form ``f_k = max(fmin_k, sqrt(w S / (R_k lambda)))``: shares proportional to
1 / sqrt(R_k) above their least.

Admission: candidates that cannot finish even with the whole band are left out; the
rest are admitted in the order of their least share (ties to the lower id) while the
least shares of a cell sum to at most 1. Transmit powers are left as they are: in
simfl's energy model the radio draws ``tx_w`` whatever it radiates, so a lower power
would only lengthen the upload. A billionth of the deadline is kept spare for rounding.
The split is fixed for the round (frequency division): it is the least energy among
fixed splits, not against a scheduler that hands a finished upload's band to the others.
"""

from __future__ import annotations

import math

import numpy as np

from simfl.core.config.policy import MinEnergy
from simfl.core.registry import implements
from simfl.core.round_policy import Allocation, RoundState

#: bisection steps (each halves an interval: 64 take [0, 1] below 1e-19)
STEPS = 64
#: the part of the deadline kept spare so that rounding never makes an upload late
SPARE = 1e-9


class Uploads:
    """The upload time and its share derivative for clients of one cell."""

    def __init__(self, bits: float, full_bps: np.ndarray, a_hz: np.ndarray | None,
                 band_hz: float) -> None:
        self.bits, self.full_bps, self.a_hz, self.band_hz = bits, full_bps, a_hz, band_hz

    def rate(self, f: np.ndarray) -> np.ndarray:
        if self.a_hz is None:
            return np.asarray(f * self.full_bps)
        b = f * self.band_hz
        return np.asarray(b * np.log2(1.0 + self.a_hz / b))

    def rate_slope(self, f: np.ndarray) -> np.ndarray:
        """d rate / d f."""
        if self.a_hz is None:
            return self.full_bps
        x = self.a_hz / (f * self.band_hz)
        return np.asarray(self.band_hz * (np.log2(1.0 + x) - x / ((1.0 + x) * math.log(2.0))))

    def least_share(self, most_s: np.ndarray) -> np.ndarray:
        """The share on which each upload takes ``most_s``; inf when even the whole band
        is too slow."""
        with np.errstate(divide="ignore"):
            need_bps = self.bits / np.maximum(most_s, 0.0)
        if self.a_hz is None:
            f = need_bps / self.full_bps
            return np.where((most_s > 0) & (f <= 1.0), f, math.inf)
        lo, hi = np.zeros_like(need_bps), np.ones_like(need_bps)
        for _ in range(STEPS):
            mid = 0.5 * (lo + hi)
            fast = self.rate(mid) >= need_bps
            hi, lo = np.where(fast, mid, hi), np.where(fast, lo, mid)
        return np.where((most_s > 0) & (self.rate(np.ones_like(hi)) >= need_bps), hi, math.inf)


class CellProblem:
    """min sum E_k(f_k) s.t. sum f_k <= 1, f_k >= fmin_k, for the admitted clients of a cell."""

    def __init__(self, uploads: Uploads, fmin: np.ndarray, w: float, kappa: float,
                 cycles: np.ndarray, time_s: np.ndarray) -> None:
        self.up, self.fmin, self.w = uploads, fmin, w
        self.kappa, self.cycles, self.time_s = kappa, cycles, time_s

    def saving(self, f: np.ndarray) -> np.ndarray:
        """-dE_k/df at shares f."""
        rate = self.up.rate(f)
        u = self.up.bits / rate
        dedu = self.w + 2.0 * self.kappa * self.cycles ** 3 / (self.time_s - u) ** 3
        return np.asarray(dedu * self.up.bits * self.up.rate_slope(f) / rate ** 2)

    def shares_at(self, lam: float) -> np.ndarray:
        lo, hi = self.fmin.copy(), np.ones_like(self.fmin)
        for _ in range(STEPS):
            mid = 0.5 * (lo + hi)
            more = self.saving(mid) > lam
            lo, hi = np.where(more, mid, lo), np.where(more, hi, mid)
        return np.where(self.saving(self.fmin) <= lam, self.fmin, lo)

    def solve(self) -> np.ndarray:
        if self.fmin.size == 1:
            return np.ones(1)
        top = float(np.max(self.saving(self.fmin)))  # every client at its least share
        lo, hi = math.log(top) - 700.0, math.log(top)
        for _ in range(STEPS):
            mid = 0.5 * (lo + hi)
            if self.shares_at(math.exp(mid)).sum() > 1.0:
                lo = mid
            else:
                hi = mid
        return self.shares_at(math.exp(hi))  # the side whose shares fit in the band


@implements(MinEnergy)
class MinEnergyPolicy:
    """Band shares (and DVFS clocks) of least round energy under the deadline."""

    def __init__(self, cfg: MinEnergy) -> None:
        self.cfg = cfg

    def decide(self, state: RoundState) -> Allocation:
        dvfs, radio = state.dvfs, state.radio
        time_s = state.deadline_s * (1.0 - SPARE) - state.download_s
        compute_s = state.compute_s if dvfs is None else dvfs.cycles / dvfs.max_cpu_hz
        a_hz = None if radio is None else (
            10.0 ** ((radio.tx_power_dbm - 30.0 + radio.gain_db) / 10.0) / radio.noise_w_per_hz)
        band_hz = 0.0 if radio is None else radio.bandwidth_hz
        uploads = Uploads(state.upload_bits, state.uplink_bps, a_hz, band_hz)
        fmin = uploads.least_share(time_s - compute_s)
        cells = state.cells()
        share: dict[int, float] = {}
        clocks: dict[int, float] = {}
        for cell in np.unique(cells).tolist():
            admitted = _admit(fmin, cells == cell)
            if not admitted.size:
                continue
            cycles = np.zeros(admitted.size) if dvfs is None else dvfs.cycles[admitted]
            problem = CellProblem(
                Uploads(state.upload_bits, state.uplink_bps[admitted],
                        None if a_hz is None else a_hz[admitted], band_hz),
                fmin[admitted], state.tx_w, 0.0 if dvfs is None else dvfs.kappa, cycles,
                time_s[admitted])
            f = problem.solve()
            u = problem.up.bits / problem.up.rate(f)
            for i, k in enumerate(admitted.tolist()):
                client = int(state.clients[k])
                share[client] = float(f[i])
                if dvfs is not None:
                    clocks[client] = float(min(cycles[i] / (time_s[k] - u[i]),
                                               dvfs.max_cpu_hz[k]))
        return Allocation(selected=sorted(share), share=share, cpu_hz=clocks)


def _admit(fmin: np.ndarray, in_cell: np.ndarray) -> np.ndarray:
    """Positions of a cell's feasible candidates, by least share, while they fit."""
    positions = np.flatnonzero(in_cell & np.isfinite(fmin))
    order = positions[np.argsort(fmin[positions], kind="stable")]
    fits = np.cumsum(fmin[order]) <= 1.0
    return np.sort(order[fits])
