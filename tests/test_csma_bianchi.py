"""IEEE 802.11 DCF against Bianchi's fixed point: the solver exactly, the slot-level DCF
in saturation within 5 %, basic access and RTS/CTS.

The preset is Bianchi's 1 Mbit/s FHSS table (JSAC 2000, Table II), simfl's defaults at
1 Mbit/s: W = 32, m = 5, payload 8184 bits, MAC header 272 bits, PHY header 128 bits,
ACK 112 bits + PHY header, RTS 160 + PHY, CTS 112 + PHY, slot 50 us, SIFS 28 us,
DIFS 128 us, propagation delay 1 us. No retry limit (as in the model).
"""

import math

import numpy as np
import pytest

from simfl.core.config.csma import CsmaCaMac
from simfl.sim.mac.csma.bianchi import fixed_point, stages_of, tau_of, throughput
from simfl.sim.mac.csma.dcf import Dcf
from simfl.sim.mac.csma.timing import DcfTiming

RATE_BPS = 1e6
PAYLOAD_BITS = 8184


def bianchi_preset(**changes):
    """Bianchi's parameter table: simfl's defaults at 1 Mbit/s, without a retry limit."""
    return CsmaCaMac(phy_rate_bps=RATE_BPS, retry_limit=None, **changes)


def test_the_preset_is_bianchis_table():
    cfg = bianchi_preset()
    assert (cfg.cw_min, stages_of(cfg.cw_min, cfg.cw_max)) == (32, 5)
    assert 8 * cfg.mpdu_payload_bytes == PAYLOAD_BITS
    assert (cfg.mac_header_bits, cfg.phy_header_bits, cfg.ack_bits) == (272, 128, 112)
    assert (cfg.slot_s, cfg.sifs_s, cfg.difs_s, cfg.propagation_delay_s) == (
        50e-6, 28e-6, 128e-6, 1e-6)


@pytest.mark.parametrize("n, tau, p, s", [
    (5, 0.04785, 0.17808, 0.8102), (10, 0.03731, 0.28977, 0.7579),
    (20, 0.02642, 0.39878, 0.6975), (50, 0.01539, 0.53236, 0.6109)])
def test_fixed_point_recomputes_the_table(n, tau, p, s):
    point = fixed_point(n, 32, 5)
    assert round(point.tau, 5) == tau and round(point.p, 5) == p
    timing = DcfTiming.of(bianchi_preset(), RATE_BPS)
    assert round(throughput(n, 32, 5, timing, PAYLOAD_BITS), 4) == s


def test_fixed_point_by_hand():
    # one station never collides: p = 0, tau = 2 / (W + 1)
    assert fixed_point(1, 32, 5) == (2 / 33, 0.0)
    # the two equations hold at the solution, and the closed form agrees with the sum
    point = fixed_point(10, 32, 5)
    assert point.p == pytest.approx(1 - (1 - point.tau) ** 9, abs=1e-12)
    p = point.p
    closed = 2 * (1 - 2 * p) / ((1 - 2 * p) * 33 + p * 32 * (1 - (2 * p) ** 5))
    assert tau_of(p, 32, 5) == pytest.approx(closed, rel=1e-12)
    # no pole at p = 1/2: W = 2, m = 1 gives tau = 2 / (3 + 1) by the sum
    assert tau_of(0.5, 2, 1) == 0.5


def test_one_station_throughput_by_hand():
    # n = 1: every slot cycle is (W - 1) / 2 idle slots on average, then one success
    timing = DcfTiming.of(bianchi_preset(), RATE_BPS)
    t_s = (400 + 8184 + 240) * 1e-6 + 28e-6 + 128e-6 + 2e-6
    expected = 8184e-6 / (15.5 * 50e-6 + t_s)
    assert throughput(1, 32, 5, timing, PAYLOAD_BITS) == pytest.approx(expected, rel=1e-12)


def saturated_throughput(n, rts_cts, busy_periods, seed=1):
    """The slot-level DCF's throughput for ``n`` saturated stations (every MPDU full)."""
    cfg = bianchi_preset(rts_cts=rts_cts)
    dcf = Dcf(cfg, DcfTiming.of(cfg, RATE_BPS), np.random.default_rng(seed))
    for station in range(n):
        dcf.join(station, 0.0, 10 ** 12, PAYLOAD_BITS)
    for _ in range(busy_periods):
        dcf.start_busy()
        dcf.end_busy()
    (record,) = dcf.tally.take(0, dcf.idle_count)
    assert record.contenders == n
    assert record.slots == record.idle_slots + record.successes + record.collision_slots
    return record.throughput


@pytest.mark.parametrize("rts_cts", [False, True], ids=["basic", "rts_cts"])
@pytest.mark.parametrize("n", [5, 10, 20, 50])
def test_saturated_dcf_matches_bianchi(n, rts_cts):
    expected = throughput(n, 32, 5, DcfTiming.of(bianchi_preset(rts_cts=rts_cts), RATE_BPS),
                          PAYLOAD_BITS)
    got = saturated_throughput(n, rts_cts, busy_periods=20_000)
    assert abs(got / expected - 1) < 0.05, (n, rts_cts, got, expected)


def test_rts_cts_beats_basic_access_only_with_many_stations():
    # long frames: collisions of RTS are short, so RTS/CTS wins from a few stations on
    basic, rts = (DcfTiming.of(bianchi_preset(rts_cts=r), RATE_BPS) for r in (False, True))
    assert throughput(1, 32, 5, rts, PAYLOAD_BITS) < throughput(1, 32, 5, basic, PAYLOAD_BITS)
    assert throughput(50, 32, 5, rts, PAYLOAD_BITS) > throughput(50, 32, 5, basic, PAYLOAD_BITS)
    assert math.isclose(saturated_throughput(1, False, 2000), throughput(
        1, 32, 5, basic, PAYLOAD_BITS), rel_tol=0.05)
