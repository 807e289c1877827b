"""Closed forms of the shared band: processor sharing, min-latency split, round robin,
two-link capture, slotted ALOHA with capture and the broadcast downlink."""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from band_helpers import (MODEL_BYTES, RATE_BPS, arrivals, band_sim, everyone,  # noqa: E402
                          radio_map, with_radio)
from simfl.core.config import OfdmaMac, SlottedAlohaMac  # noqa: E402
from simfl.sim.radio.band import (min_latency_fixed_se, min_latency_split,  # noqa: E402
                                  share_rate_bps)
from simfl.sim.radio.broadcast import Broadcast  # noqa: E402
from simfl.sim.radio.capture import Air, Capture  # noqa: E402

S_BITS = 8 * MODEL_BYTES  # 10 Mb


@pytest.mark.parametrize("k", [1, 3, 5])
def test_processor_sharing_k_together_finish_at_k_s_over_c(k):
    sim = band_sim([0.0] * k, OfdmaMac())
    got = arrivals(sim.run_round(0, everyone))
    assert got == pytest.approx({c: k * S_BITS / RATE_BPS for c in range(k)}, rel=1e-12)


def test_processor_sharing_staggered_starts_finish_at_1_5_and_2_s():
    sim = band_sim([0.0, 0.5], OfdmaMac())  # uploads start at 0 and 0.5 s
    assert arrivals(sim.run_round(0, everyone)) == pytest.approx({0: 1.5, 1: 2.0}, rel=1e-12)


def test_min_latency_fixed_spectral_efficiency_worked_example(oracle):
    t_s, b_hz = min_latency_fixed_se(np.array([1e6, 2e6, 4e6]),
                                     np.log2(1.0 + np.array([10.0, 3.0, 30.0])), 1e6)
    oracle("min-latency T (s)", 2.09646, t_s, 5e-6)
    for got, want in zip(b_hz, (137.88e3, 476.99e3, 385.12e3)):
        oracle("min-latency b_k (Hz)", want, got, 0.01e3)


def test_min_latency_power_limited_recovers_a_known_split_end_to_end():
    # pick the split and T, derive each client's P g / N0 for one 10 Mb update in T
    b_hz, t_s, band_hz, noise_w = np.array([0.2e6, 0.3e6, 0.5e6]), 4.0, 1e6, 1e-12
    a_hz = b_hz * (2.0 ** (S_BITS / t_s / b_hz) - 1.0)
    got_t, got_b = min_latency_split(np.full(3, S_BITS), a_hz, band_hz)
    assert got_t == pytest.approx(t_s, rel=1e-9) and got_b == pytest.approx(b_hz, rel=1e-6)
    rx_w = a_hz * noise_w / band_hz
    sim = band_sim([0.0, 0.0, 0.0], OfdmaMac(scheduler="min_latency"),
                   air=with_radio(rx_w, noise_w=noise_w, bandwidth_hz=band_hz))
    assert arrivals(sim.run_round(0, everyone)) == pytest.approx({0: t_s, 1: t_s, 2: t_s},
                                                                 rel=1e-9)


def test_round_robin_gives_equal_time_shares_of_one_block():
    # one block for three clients: each holds the whole band a third of the time
    noise_w, band_hz = 1e-12, 1e6
    a_hz = np.array([1.0, 3.0, 15.0]) * band_hz  # full-band SNR 1, 3, 15: 1, 2, 4 Mb/s
    r = share_rate_bps(band_hz, a_hz)
    sim = band_sim([0.0] * 3, OfdmaMac(scheduler="round_robin", resource_blocks=1),
                   air=with_radio(a_hz * noise_w / band_hz, noise_w=noise_w))
    got = arrivals(sim.run_round(0, everyone))
    t2 = S_BITS / (r[2] / 3)                        # the fastest finishes first
    left = S_BITS - t2 * r[:2] / 3                  # then two share the time
    t1 = t2 + left[1] / (r[1] / 2)
    t0 = t1 + (left[0] - (t1 - t2) * r[0] / 2) / r[0]
    assert got == pytest.approx({0: t0, 1: t1, 2: t2}, rel=1e-9)
    equal = band_sim([0.0] * 3, OfdmaMac(scheduler="equal"),
                     air=with_radio(a_hz * noise_w / band_hz, noise_w=noise_w))
    assert arrivals(equal.run_round(0, everyone))[2] < t2  # a frequency split is faster


def _two_link_capture_probability(n_draws, seed):
    """Monte Carlo of the strongest of two Rayleigh links capturing at SIR >= 0 dB,
    through the capture model (equal powers, 50 m and 100 m, exponent 3.5, no noise)."""
    rx_w = np.array([50.0, 100.0]) ** -3.5
    capture = Capture(Air(radio_map(rx_w, noise_w=1e-300), sinr_threshold_db=0.0,
                          rayleigh=True), 2)
    rng = np.random.default_rng(seed)
    tx = np.array([0, 1])
    wins = sum(bool(capture.won(tx, None, rng)[0]) for _ in range(n_draws))
    return wins / n_draws


def test_two_link_capture_matches_the_closed_form(oracle):
    theta, ratio = 1.0, (100.0 / 50.0) ** -3.5
    expected = 1.0 / (1.0 + theta * ratio)  # 0.918790
    assert expected == pytest.approx(0.918790, abs=1e-6)
    n = 40_000
    p = _two_link_capture_probability(n, seed=11)
    oracle("two-link capture P(SIR >= 0 dB)", expected, p,
           4 * math.sqrt(expected * (1 - expected) / n))


def _contention_stats(sim, rounds):
    """Slots and successes per number of contenders over ``rounds`` rounds of ``sim``."""
    totals = {}
    for r in range(rounds):
        sim.run_round(r, everyone)
    for event in sim.events:
        if event.kind == "mac_slots":
            for part in event.detail.split():
                n, slots, successes = (int(v) for v in part.split(":"))
                old = totals.get(n, (0, 0))
                totals[n] = (old[0] + slots, old[1] + successes)
    return totals


def test_slotted_aloha_with_capture_matches_its_own_monte_carlo(oracle):
    # three clients that transmit in every slot (p = 1) at mean powers 1, 1/2, 1/4,
    # Rayleigh, 3 dB: a slot with all three succeeds iff the strongest clears theta
    rx_w, theta = np.array([1.0, 0.5, 0.25]), 10 ** 0.3
    p = rx_w * np.random.default_rng(5).standard_exponential((400_000, 3))
    best = p.max(axis=1)
    expected = float(np.mean(best >= theta * (p.sum(axis=1) - best)))
    air = Air(radio_map(rx_w, noise_w=1e-300), sinr_threshold_db=3.0, rayleigh=True)
    sim = band_sim([0.0] * 3, SlottedAlohaMac(access_prob=1.0, slot_s=0.01), air=air,
                   deadline_s=0.05)
    slots, successes = _contention_stats(sim, 1500)[3]
    oracle("slotted ALOHA capture, 3 always transmitting", expected, successes / slots,
           4 * math.sqrt(expected * (1 - expected) / slots))
    assert 0.2 < expected < 0.8  # neither the collision limit nor a sure capture


def test_broadcast_ends_every_download_at_bits_over_the_weakest_rate():
    noise_w, band_hz = 1e-12, 1e6
    snr = np.array([100.0, 3.0, 30.0])  # downlink SNRs at the access point's power
    m = radio_map(np.ones(3) * 1e-9, noise_w=noise_w, bandwidth_hz=band_hz,
                  ap_tx_power_dbm=0.0)
    m.gain_db = 10.0 * np.log10(snr * noise_w / 1e-3)  # AP at 0 dBm: SNR = g / N
    cast = Broadcast(MODEL_BYTES, 1e6, m)
    expected = S_BITS / (band_hz * math.log2(1.0 + 3.0))  # the weakest: 2 bit/s/Hz
    sim = band_sim([0.0] * 3, OfdmaMac(), broadcast=cast, download_bps=1e12)
    got = arrivals(sim.run_round(0, everyone))
    uploads = 3 * S_BITS / RATE_BPS
    assert got == pytest.approx({c: expected + uploads for c in range(3)}, rel=1e-12)
    assert cast.duration_s(np.array([0, 2])) == pytest.approx(
        S_BITS / (band_hz * math.log2(31.0)), rel=1e-12)
