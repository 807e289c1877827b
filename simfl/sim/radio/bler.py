"""Block error rate of each NR MCS against the SINR: one logistic curve per MCS.

BLER_m(s) = 1 / (1 + exp((s - s50_m) / w)), s the SINR in dB, with s50_m the SINR at
which MCS m loses half its blocks (:data:`HALF_BLER_SINR_DB`) and w one width shared by
every MCS (:data:`WIDTH_DB`). The numbers are a fit to the AWGN block-error tables that
NVIDIA Sionna 2.2 ships for MCS index table 1 (``sionna/sys/bler_tables/PDSCH_table1.json``,
Apache License 2.0; the same MCS serve the PUSCH without transform precoding), at its
code block size of 500 bits: per MCS 3-28, s50_m, and one w, fitted by least squares on
the logit of every tabulated point with a BLER in [0.001, 0.999]. The fit reproduces the
tabulated BLER (15 SINR points from -5 to 20 dB per MCS) within 0.094. Sionna's tables
start at MCS 3; for MCS 0-2, s50_m is the SINR at which the Shannon capacity equals the
MCS's spectral efficiency plus the gap fitted at MCS 3 (0.96 dB).

A block is one code block here: a larger one (the tables also hold 1000 and 2000 bits)
has a steeper curve with about the same s50_m, a smaller one a flatter curve.
"""

from __future__ import annotations

import math

from simfl.sim.radio.mcs import MCS_TABLE_1

#: SINR (dB) at which each MCS of table 5.1.3.1-1 (index 0-28) has a BLER of 0.5
HALF_BLER_SINR_DB: tuple[float, ...] = (
    -6.57, -5.29, -4.29, -2.97, -1.96, -0.88, 0.16, 1.16, 2.08, 2.94,
    3.28, 3.84, 4.95, 5.69, 6.80, 7.70, 8.43,
    8.93, 9.33, 10.46, 11.39, 12.49, 13.33, 14.11, 15.26, 16.20, 17.29, 18.06, 18.95,
)
#: the logistic's width (dB): the BLER falls from 0.9 to 0.1 over 2 ln 9 w = 1.01 dB
WIDTH_DB = 0.23

assert len(HALF_BLER_SINR_DB) == len(MCS_TABLE_1)


def bler(mcs: int, sinr_db: float) -> float:
    """The block error rate of MCS ``mcs`` at ``sinr_db``."""
    z = (sinr_db - HALF_BLER_SINR_DB[mcs]) / WIDTH_DB
    if z >= 0.0:  # the two branches keep exp from overflowing
        e = math.exp(-z)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(z))


def bler_of_linear(mcs: int, sinr: float) -> float:
    """:func:`bler` of a linear SINR (a block at SINR 0 is always lost)."""
    if sinr <= 0.0:
        return 1.0
    return bler(mcs, 10.0 * math.log10(sinr))


def required_sinr_db(mcs: int, target_bler: float) -> float:
    """The SINR (dB) at which MCS ``mcs`` reaches ``target_bler`` (in (0, 1))."""
    return HALF_BLER_SINR_DB[mcs] + WIDTH_DB * math.log((1.0 - target_bler) / target_bler)


def pick_mcs(sinr_db: float, target_bler: float) -> int:
    """The highest MCS whose BLER at ``sinr_db`` is at most ``target_bler``; 0 if none is."""
    for mcs in range(len(MCS_TABLE_1) - 1, 0, -1):
        if bler(mcs, sinr_db) <= target_bler:
            return mcs
    return 0
