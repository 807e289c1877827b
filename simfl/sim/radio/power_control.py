"""Uplink power control: each client's transmit power toward its serving access point.

Each kind of ``network.radio.power_control`` is a function ``(rule, radio, gain_db,
max_dbm) -> power_dbm`` named with :func:`~simfl.core.registry.implements`: ``gain_db``
is each client's mean path gain toward its access point (minus path loss and
shadowing), ``max_dbm`` its maximum power, and the result its power in dBm (``-inf``:
the client stays silent). The powers land in the radio map
(:attr:`~simfl.sim.radio.radio_map.RadioMap.tx_power_dbm`), which the links, the shared
band, capture and the amplifier's energy all read: whatever writes a client's power
there (a per-round policy) is what the client then transmits and pays for.
"""

from __future__ import annotations

import math

import numpy as np

from simfl.core.config.radio import (ChannelInversion, FixedPower, FractionalPower, Radio,
                                     TruncatedInversion)
from simfl.core.registry import implements


def fixed_power(rule: FixedPower, radio: Radio, gain_db: np.ndarray,
                max_dbm: np.ndarray) -> np.ndarray:
    """Every client at its maximum power."""
    return np.array(max_dbm)


def channel_inversion(rule: ChannelInversion, radio: Radio, gain_db: np.ndarray,
                      max_dbm: np.ndarray) -> np.ndarray:
    """The power that reaches ``target_snr_db``, at most the maximum."""
    return np.asarray(np.minimum(rule.target_snr_db + radio.noise_dbm - gain_db, max_dbm))


def truncated_inversion(rule: TruncatedInversion, radio: Radio, gain_db: np.ndarray,
                        max_dbm: np.ndarray) -> np.ndarray:
    """The power that reaches ``target_snr_db``; silent where that exceeds the maximum."""
    needed = rule.target_snr_db + radio.noise_dbm - gain_db
    return np.where(needed <= max_dbm, needed, -np.inf)


def fractional_power(rule: FractionalPower, radio: Radio, gain_db: np.ndarray,
                     max_dbm: np.ndarray) -> np.ndarray:
    """NR open loop: min(P_max, p0 + 10 log10 M_RB + alpha PL), PL = -gain_db."""
    m_rb = rule.resource_blocks(radio.bandwidth_hz)
    wanted = rule.p0_dbm + 10.0 * math.log10(m_rb) - rule.alpha * np.asarray(gain_db)
    return np.asarray(np.minimum(wanted, max_dbm))


implements(FixedPower, fixed_power)
implements(ChannelInversion, channel_inversion)
implements(TruncatedInversion, truncated_inversion)
implements(FractionalPower, fractional_power)
