"""Closed-form checks of fading with memory on the shared radio (simfl.sim.radio.fading).

Oracles: Jakes' correlation J0(2 pi f_d tau); the Gauss-Markov gain's lag correlation
(E[s(t) s*(t + tau)] = rho, and for Rayleigh corr(|h|^2(t), |h|^2(t + tau)) = rho^2);
block fading (equal within a window, independent across); the Rician moments; the
Rayleigh outage at a known distance through the whole radio link; ARQ retries inside
one fade; and the level-crossing rate of the envelope.
"""

from __future__ import annotations

import math

import numpy as np
import simpy

from simfl.core.config import IdealChannel
from simfl.core.config.fading import RayleighFading, RicianFading
from simfl.core.config.placement import GridPlacement
from simfl.core.config.cells import Cells
from simfl.core.config.radio import Radio
from simfl.core.rng import RngTree
from simfl.sim.links.channel import arq_transfer
from simfl.sim.radio.fading import FadingProcess, jakes_rho
from simfl.sim.radio.link import RadioLink
from simfl.sim.radio.propagation import build_radio_map

#: Doppler shift of a 3 m/s walker on 2.4 GHz, v f_c / c with c = 3e8 m/s
DOPPLER_HZ = 24.0
LAG_S = 0.010


def _mean_and_se(values: np.ndarray) -> tuple[float, float]:
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(values.size))


def test_jakes_rho_for_a_walker_at_2_4_ghz(oracle):
    assert 3.0 * 2.4e9 / 3e8 == DOPPLER_HZ
    oracle("Jakes rho = J0(2 pi 24 Hz 10 ms)", 0.50738, jakes_rho(DOPPLER_HZ, LAG_S), 5e-6)
    # the series J0(x) = sum (-1)^m (x/2)^2m / (m!)^2, independently of scipy
    x = 2.0 * math.pi * DOPPLER_HZ * LAG_S
    series = sum((-1) ** m * (x / 2.0) ** (2 * m) / math.factorial(m) ** 2 for m in range(30))
    assert abs(jakes_rho(DOPPLER_HZ, LAG_S) - series) < 1e-12


def _pairs(cfg, n_clients: int, t0_s: float, t1_s: float, seed: int = 7):
    """The scattered parts of ``n_clients`` clients at t0 and at t1."""
    process = FadingProcess(cfg, "uplink", RngTree(seed), n_clients)
    first = np.array([process.scattered(c, t0_s) for c in range(n_clients)])
    second = np.array([process.scattered(c, t1_s) for c in range(n_clients)])
    return process, first, second


def test_gauss_markov_lag_correlation_is_jakes(oracle):
    rho = jakes_rho(DOPPLER_HZ, LAG_S)
    _, s0, s1 = _pairs(RayleighFading(doppler_hz=DOPPLER_HZ), 20_000, 0.3, 0.3 + LAG_S)
    mean, se = _mean_and_se((s0 * np.conj(s1)).real)
    oracle("Gauss-Markov E[s(t) s*(t+tau)] = rho", rho, mean, 4 * se)
    # |h|^2 of Rayleigh: means 1, variances 1, so E[g0 g1] = 1 + rho^2
    mean, se = _mean_and_se(np.abs(s0) ** 2 * np.abs(s1) ** 2)
    oracle("Rayleigh corr(|h|^2(t), |h|^2(t+tau)) = rho^2", rho ** 2, mean - 1.0, 4 * se)


def test_block_fading_is_constant_in_a_window_and_independent_across(oracle):
    cfg = RayleighFading(coherence_s=0.1)
    process = FadingProcess(cfg, "uplink", RngTree(3), 4)
    inside = [process.gain(2, t) for t in (0.25, 0.2, 0.29999, 0.21)]
    assert len(set(inside)) == 1
    assert process.gain(2, 0.3) != inside[0]
    # the same window gives the same gain whatever was asked before
    fresh = FadingProcess(cfg, "uplink", RngTree(3), 4)
    fresh.gain(2, 7.0), fresh.gain(1, 0.22)
    assert fresh.gain(2, 0.23) == inside[0]
    # another direction has its own numbers
    assert FadingProcess(cfg, "downlink", RngTree(3), 4).gain(2, 0.25) != inside[0]
    _, s0, s1 = _pairs(cfg, 20_000, 0.05, 0.15)
    mean, se = _mean_and_se(np.abs(s0) ** 2 * np.abs(s1) ** 2)
    oracle("block fading: E[g(window k) g(window k+1)] = 1", 1.0, mean, 4 * se)


def test_rician_gain_has_mean_one_and_its_variance(oracle):
    k = 3.0
    for memory in ({"coherence_s": 0.0}, {"doppler_hz": DOPPLER_HZ}):
        process = FadingProcess(RicianFading(k_factor=k, **memory), "uplink", RngTree(5), 50)
        gains = np.array([process.gain(c, 1.0 * t) for t in range(800) for c in range(50)])
        mean, se = _mean_and_se(gains)
        oracle(f"Rician K=3 ({list(memory)[0]}): E|h|^2 = 1", 1.0, mean, 4 * se)
    # per-attempt draws are independent: the variance (1 + 2K) / (1 + K)^2 = 0.4375
    process = FadingProcess(RicianFading(k_factor=k), "uplink", RngTree(6), 1)
    gains = np.array([process.gain(0, 0.0) for _ in range(40_000)])
    centred = (gains - 1.0) ** 2
    var, se = _mean_and_se(centred)
    oracle("Rician K=3: var |h|^2 = (1 + 2K)/(1 + K)^2", (1 + 2 * k) / (1 + k) ** 2, var, 4 * se)


def _radio_link(fading, threshold_db: float | None = 0.0, d_m: float = 100.0) -> RadioLink:
    """One client ``d_m`` from its access point: P_tx 23 dBm, B = 1 MHz, NF 7 dB,
    PL(1 m) = 40 dB, exponent 3.5, noise -174 dBm/Hz (kT at 290 K, rounded)."""
    radio = Radio(fading=fading)  # the defaults are those numbers
    assert (radio.tx_power_dbm, radio.bandwidth_hz, radio.noise_figure_db) == (23.0, 1e6, 7.0)
    rngs = RngTree(11)
    radio_map, _ = build_radio_map(GridPlacement(), Cells(access_points=((d_m, 0.0),)),
                                   radio, 1, rngs)
    return RadioLink(IdealChannel(), radio_map, "uplink",
                     FadingProcess(fading, "uplink", rngs, 1), threshold_db, rngs)


def test_rayleigh_outage_at_100_m_through_the_radio_link(oracle):
    link = _radio_link(RayleighFading())
    oracle("mean SNR at 100 m (dB)", 20.0, 10 * math.log10(link.mean_snr(0)), 1e-9)
    n = 100_000
    lost = np.array([not link.transmit(0.0, 1000, None, client=0).ok for _ in range(n)])
    mean, _ = _mean_and_se(lost.astype(float))
    p = 1.0 - math.exp(-1.0 / 100.0)
    oracle("Rayleigh outage at 100 m, theta = 0 dB", p, mean, 4 * math.sqrt(p * (1 - p) / n))


def test_an_attempt_in_outage_lasts_bits_over_the_threshold_rate(oracle):
    # 150 m: PL = 40 + 35 log10 150 = 116.163 dB, mean SNR 23 - 116.163 + 107 = 13.837 dB;
    # theta = 5 dB, R(theta) = 1 MHz log2(1 + 3.162) = 2.0575 Mb/s.
    # Lost attempts are sent at R(theta), so each lasts bits / R(theta); the others at the
    # capacity of their SNR (>= theta), never longer
    link = _radio_link(RayleighFading(), threshold_db=5.0, d_m=150.0)
    oracle("mean SNR at 150 m (dB)", 13.8368, 10 * math.log10(link.mean_snr(0)), 1e-4)
    n_bytes, n = 50_000, 20_000
    r_theta = 1e6 * math.log2(1.0 + 10 ** 0.5)
    attempts = [link.transmit(0.0, n_bytes, None, client=0) for _ in range(n)]
    lost_s = np.array([a.airtime_s for a in attempts if not a.ok])
    sent_s = np.array([a.airtime_s for a in attempts if a.ok])
    p = 1.0 - math.exp(-(10 ** 0.5) / link.mean_snr(0))
    oracle("Rayleigh outage at 150 m, theta = 5 dB", p, lost_s.size / n,
           4 * math.sqrt(p * (1 - p) / n))
    oracle("longest lost attempt = bits / R(theta) (s)", 8 * n_bytes / r_theta,
           float(lost_s.max()), 1e-12)
    assert float(lost_s.min()) == float(lost_s.max())
    assert float(sent_s.max()) <= 8 * n_bytes / r_theta


def _lost_retries(coherence_s: float) -> tuple[int, int]:
    """Over many transfers of 4 attempts at 10 dB below the mean SNR: (retries after a
    lost first attempt, of them lost)."""
    link = _radio_link(RayleighFading(coherence_s=coherence_s), threshold_db=10.0)
    retries = lost = 0
    for start in range(3000):
        env = simpy.Environment(initial_time=start * 10.0)
        losses: list[int] = []
        process = env.process(arq_transfer(env, link, 1000, None, client=0, max_attempts=4,
                                           on_lost=lambda a, more: losses.append(a)))
        env.run(until=process)
        if losses and losses[0] == 1:  # the attempts after the first: lost ones, and
            retries += len(losses) - 1 + int(bool(process.value))  # the one that got through
            lost += len(losses) - 1
    return retries, lost


def test_arq_retries_inside_one_fade_are_lost_with_the_first_attempt(oracle):
    # threshold 10 dB below a 20 dB mean: an attempt is lost w.p. 1 - exp(-0.1)
    p = 1.0 - math.exp(-0.1)
    retries, lost = _lost_retries(coherence_s=5.0)  # transfers 10 s apart, one window each
    assert retries > 100 and lost == retries
    retries, lost = _lost_retries(coherence_s=0.0)  # a fresh draw per attempt
    oracle("per-attempt fading: P(retry lost | first lost)", p, lost / retries,
           4 * math.sqrt(p * (1 - p) / retries))


def test_level_crossing_rate_of_the_gauss_markov_envelope(oracle):
    """Downward crossings of 10 dB below the rms: Jakes' N = sqrt(2 pi) f_d r e^{-r^2}
    = 17.21 per s. The AR(1) process has Jakes' correlation only between successive
    samples; its envelope is rougher than the continuous Jakes process, and its crossing
    rate depends on the sampling step (about 16 to 18.5 per s for steps of 0.1 to 2 ms,
    13 at 5 ms, 8 at 10 ms over 200 s). Sampled every millisecond it is within 25 %."""
    threshold = 10 ** (-10 / 20)
    expected = math.sqrt(2 * math.pi) * DOPPLER_HZ * threshold * math.exp(-threshold ** 2)
    assert abs(expected - 17.21) < 0.005
    process = FadingProcess(RayleighFading(doppler_hz=DOPPLER_HZ), "uplink", RngTree(2), 1)
    step_s, duration_s = 0.001, 60.0
    envelope = np.abs([process.scattered(0, k * step_s)
                       for k in range(int(duration_s / step_s))])
    down = int(np.sum((envelope[:-1] >= threshold) & (envelope[1:] < threshold)))
    oracle("Gauss-Markov level-crossing rate, 10 dB below rms (1/s)", expected,
           down / duration_s, 0.25 * expected)
