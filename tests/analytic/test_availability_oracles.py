"""Availability models against their closed forms, by running the models and the simulator.

Tolerances: per-client frequencies over R independent rounds within 5 binomial standard
errors (several hundred comparisons, so 5 rather than 4 keeps a false alarm below 1e-4);
population fractions within 4 standard errors. Seeds are fixed.
"""

import numpy as np
import pytest

from conftest import everyone, make_sim
from simfl.core.config import (Bernoulli, Diurnal, LessDataFirst, LogNormal, Markov,
                               MifaAdversarial, MoreDataFirst, SinLogNormal, Trace, YCycle,
                               YMaxFirst)
from simfl.core.rng import RngTree
from simfl.sim.traces import formats as tr
from simfl.sim.availability.events import TraceOnline
from simfl.sim.availability.models import build_availability

N_CLIENTS, ROUNDS = 40, 2400  # 2400 = 24 x 100: whole SLN days and YC cycles


def population(seed=5):
    rng = np.random.default_rng(seed)
    n_samples = rng.integers(5, 500, size=N_CLIENTS)
    counts = np.zeros((N_CLIENTS, 10))
    for i in range(N_CLIENTS):
        counts[i, rng.choice(10, size=rng.integers(1, 4), replace=False)] = 1
    return n_samples, counts


def frequencies(cfg, n_samples, counts, seed=11):
    model = build_availability(cfg, N_CLIENTS, RngTree(seed), n_samples, counts)
    return model, np.mean([model.online(t, 0.0) for t in range(ROUNDS)], axis=0)


def within_binomial(freq, p, k=5.0):
    se = np.sqrt(np.maximum(p * (1 - p), 1e-12) / ROUNDS)
    assert np.all(np.abs(freq - p) <= k * se + 1e-12), np.max(np.abs(freq - p) / se)


@pytest.mark.parametrize("cfg", [Bernoulli(p=0.3), MoreDataFirst(beta=0.5), LessDataFirst(beta=0.5),
                                 YMaxFirst(beta=0.6), MifaAdversarial(p_min=0.2),
                                 LogNormal(beta=0.5)], ids=lambda c: c.kind)
def test_static_probabilities_are_long_run_frequencies(cfg):
    n_samples, counts = population()
    held = counts > 0
    lowest = np.argmax(held, axis=1)
    expected = {
        "bernoulli": np.full(N_CLIENTS, 0.3),
        "more_data_first": np.sqrt(n_samples) / np.sqrt(n_samples).max(),
        "less_data_first": (1 / np.sqrt(n_samples)) / (1 / np.sqrt(n_samples)).max(),
        "y_max_first": 0.6 * lowest / 9 + 0.4,
        "mifa_adversarial": 0.2 + 0.8 * lowest / 9,
    }
    model, freq = frequencies(cfg, n_samples, counts)
    p = expected[cfg.kind] if cfg.kind in expected else model.p  # LN: the drawn T_i / max T_j
    within_binomial(freq, p)


def test_sin_log_normal_averages_half_of_log_normal():
    n_samples, counts = population()
    ln, _ = frequencies(LogNormal(beta=0.5), n_samples, counts)
    _, freq = frequencies(SinLogNormal(beta=0.5), n_samples, counts)
    within_binomial(freq, 0.5 * ln.p)  # the 24-point sine factor averages 0.5


def test_y_cycle_long_run_frequency():
    n_samples, counts = population()
    _, freq = frequencies(YCycle(beta=0.5), n_samples, counts)
    # FedGS repo: each held label is in phase for 10 of every 100 rounds
    within_binomial(freq, 0.5 + 0.5 * (counts > 0).sum(axis=1) / 10)
    _, freq = frequencies(YCycle(beta=0.5, variant="flgo"), n_samples, counts)
    lo, hi = np.argmax(counts > 0, axis=1) / 9, (9 - np.argmax(counts[:, ::-1] > 0, axis=1)) / 9
    r = (1 + np.arange(24)) / 24
    in_phase = np.array([np.mean((a <= r) & (r <= b)) for a, b in zip(lo, hi)])
    within_binomial(freq, 0.5 + 0.5 * in_phase)


def test_diurnal_groups_long_run_fraction():
    counts = np.eye(10)[np.arange(N_CLIENTS) % 10]
    for strategy, day_fraction in (("number", 0.5), ("time", 10 / 15), ("mix", 0.5)):
        model = build_availability(Diurnal(strategy=strategy, period_rounds=10, alpha=0.5),
                                   N_CLIENTS, RngTree(1), None, counts)
        freq = np.mean([model.online(t, 0.0) for t in range(300)], axis=0)
        lower = np.arange(N_CLIENTS) % 10 < 5  # the day group (before mix swaps some)
        if strategy == "mix":
            lower = np.isclose(freq, day_fraction, atol=1e-12)
        assert freq == pytest.approx(np.where(lower, day_fraction, 1 - day_fraction), abs=1e-12)


def test_diurnal_sine_amplitude_from_a_4x_ratio(oracle):
    """The diurnal sine model: ratio 4 gives A = 0.6; estimate A from draws at peak and trough."""
    n, reps, mean_p = 20000, 20, 0.5
    model = build_availability(Diurnal(strategy="sine", mean_p=mean_p, peak_trough_ratio=4.0,
                                       peak_s=3600.0 * 14), n, RngTree(2))
    peak = np.mean([model.online(r, 3600.0 * 14).mean() for r in range(reps)])
    trough = np.mean([model.online(reps + r, 3600.0 * 2).mean() for r in range(reps)])
    a_hat = (peak - trough) / (peak + trough)
    # delta method: var(a_hat) ~ (dA/dpeak)^2 var(peak) + (dA/dtrough)^2 var(trough)
    p_hi, p_lo = mean_p * 1.6, mean_p * 0.4
    d_hi, d_lo = 2 * p_lo / (p_hi + p_lo) ** 2, 2 * p_hi / (p_hi + p_lo) ** 2
    se = np.sqrt(d_hi ** 2 * p_hi * (1 - p_hi) + d_lo ** 2 * p_lo * (1 - p_lo)) / np.sqrt(n * reps)
    oracle("22 diurnal amplitude from a 4x ratio", 0.6, a_hat, 4 * se)
    assert peak / trough == pytest.approx(4.0, rel=0.05)


def test_markov_on_fraction(oracle):
    """item 21: alpha = 1/30, beta = 1/10 per minute: long-run availability 0.25."""
    n = 100_000
    cfg = Markov(on_rate_per_s=1 / 1800, off_rate_per_s=1 / 600)
    model = build_availability(cfg, n, RngTree(3))
    for t_s in (0.0, 36_000.0, 360_000.0):  # start (stationary) and long after
        frac = model.online(0, t_s).mean()
        oracle(f"21 Markov on-fraction at t = {t_s:g} s", 0.25, frac, 4 * np.sqrt(0.25 * 0.75 / n))


def test_markov_survival_through_the_simulator(oracle):
    """item 21: P(stays on for T = 5 min | on) = exp(-T/10 min) = 0.60653.

    Every online client is invited and computes for exactly 300 s (ideal, instant links);
    it delivers iff it stays online; going offline interrupts it with reason offline."""
    n = 1000
    online = build_availability(Markov(on_rate_per_s=1 / 1800, off_rate_per_s=1 / 600), n,
                                RngTree(4))
    sim = make_sim(n_clients=n, compute_s=(300.0,), upload_s=0.0, deadline_s=400.0, online=online)
    received = invited = 0
    for r in range(20):
        outcome = sim.run_round(r, everyone)
        invited += len(outcome.selected)
        received += len(outcome.received)
        assert {m.reason for m in outcome.missing} <= {"offline"}
    p = np.exp(-0.5)
    assert p == pytest.approx(0.60653, abs=1e-5)
    oracle("21 Markov survival for 5 min", p, received / invited, 4 * np.sqrt(p * (1 - p) / invited))


def test_trace_replay_reproduces_the_traces_availability_fraction(oracle):
    rng = np.random.default_rng(9)
    rows, horizon_s = {}, 1000.0
    for k in range(30):  # alternating on/off periods of random lengths
        t, spans = rng.uniform(0, 50), []
        while t < horizon_s:
            end = min(t + rng.exponential(60.0), horizon_s)
            spans.append((t, end, ""))
            t = end + rng.exponential(120.0)
        rows[k] = [s for s in spans if s[1] > s[0]]
    trace = tr.build_trace(rows, horizon_s, "generated")
    target = trace.on_fraction(horizon_s)
    model = TraceOnline(Trace(path="generated", periodic=True), 300, RngTree(0), trace=trace)
    times = np.sort(rng.uniform(0, 5 * horizon_s, size=4000))
    frac = np.mean([model.online(0, t).mean() for t in times])
    # each sample is a fraction in [0, 1]: variance at most 1/4 per sampled time
    oracle("trace replay availability fraction", target, frac, 4 * 0.5 / np.sqrt(len(times)))
    assert 0.2 < target < 0.5
