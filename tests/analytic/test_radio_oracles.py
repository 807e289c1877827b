"""Closed forms of the shared radio's geometry: mean SNR from the link budget, uniform
placement in area, Poisson point counts, association, correlated shadowing and power
control. Tolerances are 4 standard errors where the check is statistical."""

import math

import numpy as np
import pytest

from simfl.core.config.placement import DiscPlacement, FilePlacement, PppPlacement
from simfl.core.config.cells import Cells
from simfl.core.config.radio import ChannelInversion, LogDistance, Radio, TruncatedInversion
from simfl.core.config.network import IdealChannel
from simfl.core.rng import RngTree
from simfl.sim.radio.link import RadioLink
from simfl.sim.radio.placement import place
from simfl.sim.radio.propagation import Propagation, build_radio_map


def _file(tmp_path, xy):
    path = tmp_path / "positions.csv"
    path.write_text("client,x_m,y_m\n" + "".join(f"{i},{x},{y}\n" for i, (x, y) in enumerate(xy)))
    return FilePlacement(path=str(path))


def test_mean_snr_at_100_m_follows_the_link_budget(tmp_path):
    # 23 dBm, PL(1 m) = 40 dB, exponent 3.5 -> PL(100 m) = 110 dB; noise over 1 MHz with a
    # 7 dB noise figure at -174 dBm/Hz: -107 dBm -> 20.0 dB
    radio = Radio(tx_power_dbm=23.0, bandwidth_hz=1e6, noise_figure_db=7.0,
                  path_loss=LogDistance(exponent=3.5, ref_m=1.0, ref_loss_db=40.0))
    radio_map, _ = build_radio_map(_file(tmp_path, [(100.0, 0.0), (0.0, -10.0)]), Cells(), radio,
                                   2, RngTree(1))
    assert radio_map.mean_snr_db(0) == pytest.approx(20.0, abs=1e-9)
    assert radio_map.mean_snr_db(1) == pytest.approx(23.0 - 75.0 + 107.0, abs=1e-9)
    link = RadioLink(IdealChannel(), radio_map, "uplink")
    got = link.transmit(0.0, 125_000, None, client=0)  # 1 Mb at log2(1 + 100) Mb/s
    assert got.ok and got.airtime_s == pytest.approx(1.0 / math.log2(1.0 + 100.0), rel=1e-12)


def test_per_client_powers_shift_each_mean_snr(tmp_path):
    radio = Radio(tx_power_dbm=(23.0, 13.0))
    radio_map, _ = build_radio_map(_file(tmp_path, [(100.0, 0.0), (100.0, 0.0)]), Cells(), radio,
                                   2, RngTree(1))
    assert radio_map.mean_snr_db(0) == pytest.approx(20.0) and \
        radio_map.mean_snr_db(1) == pytest.approx(10.0)


def test_disc_placement_is_uniform_in_area():
    cfg = DiscPlacement(radius_m=200.0, min_m=20.0)
    x, y = place(cfg, 40_000, RngTree(5).stream("placement"))
    r = np.hypot(x, y)
    assert r.min() >= 20.0 and r.max() <= 200.0
    for rho in (60.0, 100.0, 150.0):
        expected = (rho ** 2 - 20.0 ** 2) / (200.0 ** 2 - 20.0 ** 2)
        se = math.sqrt(expected * (1 - expected) / r.size)
        assert abs((r <= rho).mean() - expected) < 4 * se


def test_a_poisson_point_process_holds_enough_points_with_the_poisson_probability():
    # mean 100 points: P(N >= 100) for N ~ Poisson(100)
    mean, need, seeds = 100.0, 100, 600
    expected = 1.0 - sum(math.exp(-mean + k * math.log(mean) - math.lgamma(k + 1))
                         for k in range(need))
    cfg = PppPlacement(density_per_m2=mean / 1e6, side_m=1000.0)
    held = 0
    for seed in range(seeds):
        try:
            x, y = place(cfg, need, RngTree(seed).stream("placement"))
        except Exception:
            continue
        held += 1
        assert np.abs(x).max() <= 500.0 and np.abs(y).max() <= 500.0
    se = math.sqrt(expected * (1 - expected) / seeds)
    assert abs(held / seeds - expected) < 4 * se, (held / seeds, expected)


def test_nearest_association_splits_clients_at_the_midpoint_and_strongest_follows_gains():
    xs = np.linspace(-200.0, 1200.0, 57)
    cells = Cells(access_points=((0.0, 0.0), (1000.0, 0.0)))
    propagation = Propagation(Radio(), cells, RngTree(1), xs.size)
    ap, _ = propagation.assign(xs, np.zeros_like(xs))
    assert np.array_equal(ap, (xs > 500.0).astype(int))
    shadowed = Radio(shadowing_db=8.0)
    strongest = Propagation(shadowed, Cells(access_points=cells.access_points,
                                            association="strongest"), RngTree(2), xs.size)
    ap, gain = strongest.assign(xs, np.zeros_like(xs))
    g0, g1 = (strongest.gain_db(a, xs, np.zeros_like(xs)) for a in (0, 1))
    assert np.array_equal(ap, (g1 > g0).astype(int)) and np.array_equal(gain, np.maximum(g0, g1))
    assert (ap != (xs > 500.0)).any(), "8 dB of shadowing moves some clients to the far AP"


def test_correlated_shadowing_has_exponential_correlation_along_an_axis():
    corr_m, lag_m, pairs = 50.0, 50.0, 3000
    radio = Radio(shadowing_db=6.0, shadowing_corr_m=corr_m)
    rng = np.random.default_rng(7)
    x0 = rng.integers(0, 400, pairs) * 12.5  # spread over 5 km: pairs far apart
    y0 = rng.integers(0, 400, pairs) * 12.5
    x = np.concatenate([x0, x0 + lag_m])
    y = np.concatenate([y0, y0])
    propagation = Propagation(radio, Cells(), RngTree(3), x.size)
    field = propagation._shadowing(0, x, y, slice(None))
    a, b = field[:pairs], field[pairs:]
    rho = np.corrcoef(a, b)[0, 1]
    expected = math.exp(-lag_m / corr_m)
    se = (1 - expected ** 2) / math.sqrt(pairs)
    assert abs(rho - expected) < 4 * se, (rho, expected)
    assert abs(field.std() - 1.0) < 0.05


def test_inversion_reaches_the_target_until_the_cap_and_truncation_silences_the_rest():
    gains = np.array([-80.0, -100.0, -120.0, -140.0])
    radio = Radio(tx_power_dbm=20.0, power_control=ChannelInversion(target_snr_db=10.0))
    power = Propagation(radio, Cells(), RngTree(1), 4).tx_power_dbm(gains)
    snr = power + gains - radio.noise_dbm  # noise over 1 MHz with a 7 dB figure: -107 dBm
    needed = 10.0 + radio.noise_dbm - gains
    assert np.allclose(power, np.minimum(needed, 20.0))
    assert np.allclose(snr[needed <= 20.0], 10.0)
    truncated = Radio(tx_power_dbm=20.0, power_control=TruncatedInversion(target_snr_db=10.0))
    power = Propagation(truncated, Cells(), RngTree(1), 4).tx_power_dbm(gains)
    assert np.array_equal(np.isinf(power), needed > 20.0)


def test_a_silenced_client_loses_every_attempt_at_once(tmp_path):
    radio = Radio(tx_power_dbm=0.0, power_control=TruncatedInversion(target_snr_db=30.0))
    radio_map, _ = build_radio_map(_file(tmp_path, [(10.0, 0.0), (900.0, 0.0)]), Cells(), radio,
                                   2, RngTree(1))
    link = RadioLink(IdealChannel(), radio_map, "uplink")
    near, far = (link.transmit(0.0, 1000, None, client=c) for c in (0, 1))
    assert near.ok and not far.ok and far.airtime_s == 0.0


def test_coverage_in_a_poisson_field_of_rayleigh_interferers():
    # density 1e-4 per m^2, link of 30 m, alpha = 4, Rayleigh on every link, no noise,
    # theta = 0 dB: P(SIR >= theta) = exp(-lambda pi r^2 sqrt(theta) pi / 2) = 0.641381.
    # At theta >= 1 a link that clears the threshold is the strongest, so the capture of
    # a busy slot decides exactly this event.
    from simfl.sim.radio.capture import Air, Capture
    from simfl.sim.radio.radio_map import RadioMap

    density, r_m, field_m, trials = 1e-4, 30.0, 2000.0, 1500
    expected = math.exp(-density * math.pi * r_m ** 2 * math.pi / 2.0)
    path_loss = LogDistance(exponent=4.0, ref_m=1e-3, ref_loss_db=-120.0)  # 1/d^4
    rng = np.random.default_rng(11)
    covered = 0
    for _ in range(trials):
        n = int(rng.poisson(density * math.pi * field_m ** 2))
        radius = field_m * np.sqrt(rng.random(n))
        angle = rng.random(n) * 2 * math.pi
        x = np.concatenate([[r_m], radius * np.cos(angle)])
        y = np.concatenate([[0.0], radius * np.sin(angle)])
        radio_map = RadioMap(x_m=x, y_m=y, ap_xy_m=np.zeros((1, 2)),
                             ap=np.zeros(n + 1, dtype=np.int64),
                             gain_db=-path_loss.loss_db(np.hypot(x, y)),
                             tx_power_dbm=np.zeros(n + 1), noise_dbm=-1000.0,
                             bandwidth_hz=1e6, ap_tx_power_dbm=0.0)
        capture = Capture(Air(radio_map, 0.0, path_loss, rayleigh=True), n + 1)
        covered += bool(capture.won(np.arange(n + 1), None, rng)[0])
    se = math.sqrt(expected * (1 - expected) / trials)
    assert abs(covered / trials - expected) < 4 * se, (covered / trials, expected)
