"""Closed-form oracles of the channel and rate models (docs/network-models.md section 6).

Every estimate comes from driving the simulator (``Link.transmit`` with seeded streams,
or whole ``Simulation`` rounds), never from re-evaluating the formula. Tolerances are
4 standard errors of the estimator (binomial, Markov-chain or CLT), so a correct model
fails with probability below about 1e-4 per check; the seeds are fixed.
"""

import math

import numpy as np
import pytest

from simfl.core.config.network import (ContinuousGilbertElliottChannel, ErasureChannel, FixedRate,
                                       GilbertElliottChannel,
                                       IdealChannel, RayleighChannel, ShannonRate)
from simfl.core.rng import RngTree
from simfl.sim.availability.rounds import AlwaysOnline
from simfl.sim.links.channel import build_link
from simfl.sim.simulation import Simulation

SECOND = FixedRate(rate_bps=8000.0)  # 1000 bytes take 1 s
P_GB, P_BG = 0.02, 0.25
PI_BAD = P_GB / (P_GB + P_BG)


def binomial_tol(p, n):
    return 4.0 * math.sqrt(p * (1.0 - p) / n)


def rician_outage(k, mean_snr, threshold, terms=80):
    """P(mean_snr * |h|^2 < threshold): the non-central chi-square (2 dof, nc = 2K) CDF
    at 2(K + 1) threshold / mean_snr, as a Poisson mixture of central chi-squares."""
    half_nc, half_x = k, (k + 1) * threshold / mean_snr
    pois, term, partial, total = math.exp(-half_nc), math.exp(-half_x), 0.0, 0.0
    for j in range(terms):
        partial += term
        total += pois * (1.0 - partial)
        pois *= half_nc / (j + 1)
        term *= half_x / (j + 1)
    return total


def attempts(link, n, rng, client=0, t_step_s=0.0, n_bytes=1000):
    """Loss indicators of ``n`` attempts of one client, ``t_step_s`` apart."""
    return np.array([not link.transmit(i * t_step_s, n_bytes, rng, client=client).ok
                     for i in range(n)])


def simulate(uplink, *, n_clients, rounds, model_bytes, arq=1, deadline_s=1e6, seed=0):
    """Rounds of a Simulation where everyone is invited, computes for 0 s and downloads
    instantly; returns the outcomes."""
    rngs = RngTree(seed)
    sim = Simulation(
        rngs=rngs, n_samples=np.ones(n_clients), work_samples=np.zeros(n_clients),
        samples_per_s=np.ones(n_clients), online=AlwaysOnline(None, n_clients, rngs),
        links={"downlink": build_link(IdealChannel(rate=FixedRate(rate_bps=math.inf))),
               "uplink": build_link(uplink, rngs)},
        model_bytes=model_bytes, arq_max_attempts=arq, clients_per_round=n_clients,
        overcommit=1.0, deadline_s=deadline_s, keep_events=False)
    return [sim.run_round(r, lambda view: view.available) for r in range(rounds)]


@pytest.fixture(scope="module")
def ge_losses():
    """200,000 consecutive attempts of one client on the two-parameter GE channel."""
    link = build_link(GilbertElliottChannel(p_gb=P_GB, p_bg=P_BG, rate=SECOND))
    return attempts(link, 200_000, RngTree(11).stream("channel/uplink/0"))


def test_oracle_1_gilbert_elliott_loss_rate(ge_losses, oracle):
    """Oracle 1: loss rate = pi_B = p/(p+r) = 0.074074 for p = 0.02, r = 0.25.

    One chain of n = 200,000 attempts; the samples are correlated, so the tolerance is
    4 * sqrt(pi_B pi_G (1 + g) / ((1 - g) n)) with lag-1 correlation g = 1 - p - r.
    """
    g = 1.0 - P_GB - P_BG
    tol = 4.0 * math.sqrt(PI_BAD * (1 - PI_BAD) * (1 + g) / ((1 - g) * len(ge_losses)))
    assert PI_BAD == pytest.approx(0.074074, abs=1e-6)
    oracle("1 GE loss rate pi_B", PI_BAD, ge_losses.mean(), tol)


def test_oracle_2_gilbert_elliott_mean_burst(ge_losses, oracle):
    """Oracle 2: mean burst (run of consecutive losses) = 1/r = 4.0 for r = 0.25.

    Bursts of the same 200,000 attempts (a burst cut by the end is dropped); burst
    lengths are i.i.d. Geometric(r) with variance (1 - r)/r^2, tolerance
    4 * sqrt((1 - r) / (r^2 n_bursts)).
    """
    edges = np.diff(np.concatenate([[0], ge_losses.astype(int), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    lengths = (ends - starts)[:-1] if ge_losses[-1] else ends - starts
    tol = 4.0 * math.sqrt((1 - P_BG) / (P_BG ** 2 * len(lengths)))
    assert len(lengths) > 3000
    oracle("2 GE mean burst 1/r", 1.0 / P_BG, lengths.mean(), tol)


def test_oracle_3_three_consecutive_losses_from_stationarity(oracle):
    """Oracle 3: P(M = 3 back-to-back attempts all lost) = pi_B (1 - r)^2 = 0.041667 under
    GE (p = 0.02, r = 0.25), against pi_B^3 = 4.06e-4 for i.i.d. erasures at p = pi_B.

    n = 20,000 clients, each starting its chain (stationary) and trying 3 times;
    tolerance 4 * sqrt(q (1 - q) / n) for each channel.
    """
    n = 20_000
    expected_ge, expected_iid = PI_BAD * (1 - P_BG) ** 2, PI_BAD ** 3
    assert expected_ge == pytest.approx(0.041667, abs=1e-6)
    assert expected_iid == pytest.approx(4.06e-4, abs=1e-6)
    for cfg, expected in [(GilbertElliottChannel(p_gb=P_GB, p_bg=P_BG, rate=SECOND), expected_ge),
                          (ErasureChannel(p=PI_BAD, rate=SECOND), expected_iid)]:
        link, rng = build_link(cfg), RngTree(12).stream(f"channel/{cfg.kind}")
        all_lost = np.mean([attempts(link, 3, rng, client=c, t_step_s=1.0).all()
                            for c in range(n)])
        oracle(f"3 three consecutive losses, {cfg.kind}", expected, all_lost,
               binomial_tol(expected, n))


def test_oracle_4_continuous_gilbert_elliott_packet_success(oracle):
    """Oracle 4: an attempt of airtime T at a stationary time survives with probability
    pi_G * exp(-lambda_GB T) = 0.90759 for lambda_GB = 1/50 /s, lambda_BG = 1/4 /s, T = 1 s.

    One client's chain, n = 40,000 attempts 30 s apart (state correlation across the
    29 s gap exp(-0.27 * 29) < 1e-3, negligible), so the chain evolves in simulated time
    between uses; binomial tolerance 4 * sqrt(q (1 - q) / n).
    """
    n, rate_gb, rate_bg = 40_000, 1 / 50, 1 / 4
    expected = rate_bg / (rate_gb + rate_bg) * math.exp(-rate_gb * 1.0)
    assert expected == pytest.approx(0.90759, abs=1e-5)
    link = build_link(ContinuousGilbertElliottChannel(rate_gb_per_s=rate_gb, rate_bg_per_s=rate_bg,
                                                      rate=SECOND))
    success = 1.0 - attempts(link, n, RngTree(13).stream("channel/uplink/0"), t_step_s=30.0).mean()
    oracle("4 continuous-time GE packet success", expected, success, binomial_tol(expected, n))


@pytest.mark.parametrize("k_factor, n, table", [(0.0, 40_000, 0.095163), (5.0, 100_000, 0.0096417)],
                         ids=["oracle_5_rayleigh", "oracle_6_rician"])
def test_oracles_5_6_fading_outage(k_factor, n, table, oracle):
    """Oracles 5 and 6: outage P(SNR < threshold) with mean SNR 10 dB, threshold 0 dB:
    Rayleigh 1 - exp(-1/10) = 0.095163; Rician K = 5 (non-central chi-square CDF)
    0.0096417. n = 40,000 / 100,000 attempts; binomial tolerance 4 * sqrt(q (1 - q) / n).
    """
    expected = rician_outage(k_factor, 10.0, 1.0)
    assert expected == pytest.approx(table, rel=1e-4)
    link = build_link(RayleighChannel(mean_snr_db=10.0, threshold_db=0.0, k_factor=k_factor))
    outage = attempts(link, n, RngTree(14).stream("channel/uplink/0")).mean()
    oracle(f"5/6 fading outage, K = {k_factor:g}", expected, outage, binomial_tol(expected, n))


def _rayleigh_shannon_moments(mean_snr, threshold, bits, bandwidth_hz, points=1_000_000):
    """E[T] and E[T^2] of T = bits / (W log2(1 + max(S, threshold))), S ~ Exp(mean_snr):
    the outage part in closed form, the rest by the midpoint rule after S = -m ln u."""
    def airtime(snr):
        return bits / (bandwidth_hz * np.log2(1.0 + snr))

    p_out = 1.0 - math.exp(-threshold / mean_snr)
    top = math.exp(-threshold / mean_snr)  # u in (0, top) <=> S > threshold
    u = (np.arange(points) + 0.5) * (top / points)
    t = airtime(-mean_snr * np.log(u))
    t_out = float(airtime(threshold))
    first = p_out * t_out + float(t.sum() * top / points)
    second = p_out * t_out ** 2 + float((t ** 2).sum() * top / points)
    return p_out, first, second


def test_oracle_5b_rayleigh_shannon_outage_airtime(oracle):
    """Oracle 5b: Rayleigh (mean SNR 10 dB) with a shannon rate (W = 1 MHz) and an outage
    threshold of 0 dB, B = 1e7 bits. An attempt in outage is sent at the threshold's rate
    and lost: P(lost) = 1 - exp(-1/10) = 0.095163 and E[airtime] = E[B / (W log2(1 +
    max(S, 1)))], S ~ Exp(10). n = 40,000 attempts; tolerances 4 standard errors
    (binomial; CLT with the closed-form variance). No attempt lasts longer than B / (W
    log2 2) = 10 s."""
    bits, bandwidth_hz = 1e7, 1e6
    p_out, mean_s, second = _rayleigh_shannon_moments(10.0, 1.0, bits, bandwidth_hz)
    assert p_out == pytest.approx(0.095163, abs=1e-6)
    link = build_link(RayleighChannel(mean_snr_db=10.0, threshold_db=0.0,
                                      rate=ShannonRate(bandwidth_hz=bandwidth_hz)))
    rng, n = RngTree(15).stream("channel/uplink/0"), 40_000
    deliveries = [link.transmit(0.0, int(bits / 8), rng) for _ in range(n)]
    airtime = np.array([d.airtime_s for d in deliveries])
    lost = np.array([not d.ok for d in deliveries])
    assert airtime.max() <= bits / bandwidth_hz
    oracle("5b Rayleigh + Shannon outage probability", p_out, lost.mean(), binomial_tol(p_out, n))
    sd = math.sqrt(second - mean_s ** 2)
    oracle("5b Rayleigh + Shannon mean airtime (s)", mean_s, airtime.mean(), 4 * sd / math.sqrt(n))


def test_oracle_8_shannon_upload_time_through_a_round(oracle):
    """Oracle 8: T_up = B / (W log2(1 + SNR)) = 2.8906 s for B = 1e7 bits (1.25 MB),
    W = 1 MHz, SNR = 10 dB, through one Simulation round (0 s compute, instant download).
    Deterministic: relative tolerance 1e-12 against the closed form, which rounds to the
    table's 2.8906."""
    expected = 1e7 / (1e6 * math.log2(1.0 + 10.0))
    assert round(expected, 4) == 2.8906
    uplink = IdealChannel(rate=ShannonRate(bandwidth_hz=1e6, snr_db=10.0))
    (outcome,) = simulate(uplink, n_clients=1, rounds=1, model_bytes=1_250_000)
    oracle("8 Shannon upload time (s)", expected, outcome.received[0].t_s, 1e-12 * expected)


def test_oracle_9_deadline_miss_rayleigh_shannon(oracle):
    """Oracle 9: P(T_up > D) = 1 - exp(-(2^(B/(W D)) - 1)/mean_snr) = 0.25918 for
    B = 1e7 bits, W = 1 MHz, D = 5 s, Rayleigh mean SNR 10 dB, no outage threshold.

    Simulation with deadline 5 s, 2,000 clients x 10 rounds (n = 20,000 uploads, 0 s
    compute, instant download); the fraction missing as ``late``; binomial tolerance
    4 * sqrt(q (1 - q) / n).
    """
    expected = 1.0 - math.exp(-(2.0 ** (1e7 / (1e6 * 5.0)) - 1.0) / 10.0)
    assert expected == pytest.approx(0.25918, abs=1e-5)
    uplink = RayleighChannel(mean_snr_db=10.0, threshold_db=None, rate=ShannonRate(bandwidth_hz=1e6))
    outcomes = simulate(uplink, n_clients=2000, rounds=10, model_bytes=1_250_000, deadline_s=5.0,
                        seed=9)
    n = sum(len(o.selected) for o in outcomes)
    late = sum(m.reason == "late" for o in outcomes for m in o.missing)
    assert n == 20_000 and all(m.reason == "late" for o in outcomes for m in o.missing)
    oracle("9 deadline miss, Rayleigh + Shannon", expected, late / n, binomial_tol(expected, n))


def test_oracle_11_arq_success_and_mean_attempts(oracle):
    """Oracle 11: per-attempt success q = 0.9 (erasure p = 0.1), M = 3 attempts:
    P(success) = 1 - (1 - q)^M = 0.999 and E[attempts] = (1 - (1 - q)^M)/q = 1.11.

    Simulation with arq_max_attempts = 3, 2,000 clients x 10 rounds (n = 20,000 uploads);
    attempts = uploads + retries. Tolerances: 4 * sqrt(P(1 - P)/n) for the success rate,
    4 * sd(N)/sqrt(n) for the mean, sd of the truncated geometric N.
    """
    q, m = 0.9, 3
    success, mean = 1 - (1 - q) ** m, (1 - (1 - q) ** m) / q
    assert (success, round(mean, 4)) == (pytest.approx(0.999), 1.11)
    pmf = np.array([q * (1 - q) ** (k - 1) for k in range(1, m)] + [(1 - q) ** (m - 1)])
    sd = math.sqrt(pmf @ np.arange(1, m + 1) ** 2 - mean ** 2)
    outcomes = simulate(ErasureChannel(p=1 - q, rate=SECOND), n_clients=2000, rounds=10,
                        model_bytes=1000, arq=m, seed=11)
    n = sum(len(o.selected) for o in outcomes)
    arrived = sum(len(o.received) for o in outcomes)
    attempts_made = n + sum(o.retries for o in outcomes)
    assert n == 20_000
    oracle("11 ARQ success, M = 3", success, arrived / n, binomial_tol(success, n))
    oracle("11 ARQ mean attempts", mean, attempts_made / n, 4.0 * sd / math.sqrt(n))
