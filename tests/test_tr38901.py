"""3GPP TR 38.901 path loss (Tables 7.4.1-1 and 7.4.2-1) against values worked by hand,
and the shared radio's per-pair LoS draws against the LoS probability.

Hand-worked values, f_c = 3.5 GHz (20 log10 3.5 = 10.8814), default heights:
- UMa (h_BS 25 m, h_UT 1.5 m): d'_BP = 4 * 24 * 0.5 * 3.5e9 / c = 560.39 m.
  d2D 100 m: d3D = sqrt(100^2 + 23.5^2) = 102.724 m, log10 = 2.011672.
  LoS PL1 = 28 + 22 * 2.011672 + 10.8814 = 83.138 dB;
  NLoS = max(83.138, 13.54 + 39.08 * 2.011672 + 10.8814) = 103.038 dB;
  P_LoS = 18/100 + exp(-100/63) * (1 - 18/100) = 0.34767.
  d2D 1000 m (beyond d'_BP): d3D = 1000.276 m; PL2 = 28 + 40 * 3.000120 + 10.8814
  - 9 log10(560.39^2 + 23.5^2) = 109.406 dB.
- UMi street canyon (h_BS 10 m): d2D 100 m, d3D = 100.360 m: LoS = 32.4 + 21 log10 d3D +
  10.8814 = 85.314 dB; NLoS = 35.3 log10 d3D + 22.4 + 21.3 log10 3.5 = 104.644 dB;
  P_LoS = 0.18 + exp(-100/36) * 0.82 = 0.23098.
- RMa (h_BS 35 m, h 5 m, W 20 m): d_BP = 2 pi 35 1.5 3.5e9 / c = 3851.1 m; d2D 1000 m:
  LoS PL1 = 105.460 dB; NLoS = max(105.460, 130.424) = 130.424 dB.
- InH office (h_BS 3 m, h_UT 1 m): d2D 20 m, d3D = 20.0998 m: LoS = 65.827 dB, NLoS =
  80.759 dB, P_LoS = exp(-(20 - 6.5)/32.6) * 0.32 = 0.21150.
- Outdoor-to-indoor, low loss: 5 - 10 log10(0.3 * 10^-0.27 + 0.7 * 10^-1.9) = 12.698 dB
  through the wall.
"""

import numpy as np
import pytest

from simfl.core.config import Cells, Inh, Radio, Rma, Uma, Umi
from simfl.core.errors import ConfigError
from simfl.core.rng import RngTree
from simfl.sim.radio.propagation import Propagation

D = np.array([100.0])


@pytest.mark.parametrize("model, d_m, los_db, nlos_db, p_los", [
    (Uma(), 100.0, 83.138, 103.038, 0.34767),
    (Umi(), 100.0, 85.314, 104.644, 0.23098),
    (Rma(), 1000.0, 105.460, 130.424, np.exp(-0.99)),
    (Inh(), 20.0, 65.827, 80.759, 0.21150),
])
def test_losses_and_los_probability_match_the_tables(model, d_m, los_db, nlos_db, p_los):
    d = np.array([d_m])
    assert model.pair_loss_db(d, np.array([True]))[0] == pytest.approx(los_db, abs=2e-3)
    assert model.pair_loss_db(d, np.array([False]))[0] == pytest.approx(nlos_db, abs=2e-3)
    assert model.los_probability(d)[0] == pytest.approx(p_los, abs=1e-5)


def test_uma_los_beyond_the_breakpoint_and_distances_below_the_minimum():
    uma = Uma()
    assert uma.pair_loss_db(np.array([1000.0]), np.array([True]))[0] == pytest.approx(109.406, abs=2e-3)
    near = uma.pair_loss_db(np.array([1.0, 10.0]), np.array([True, True]))
    assert near[0] == near[1]  # closer than 10 m counts as 10 m
    assert Uma().los_probability(np.array([5.0, 18.0]))[0] == 1.0


def test_outdoor_to_indoor_wall_loss():
    assert Uma().o2i_db(np.array([0.0]), np.array([0.0]))[0] == pytest.approx(12.698, abs=2e-3)
    assert Uma(o2i="high").o2i_db(np.array([10.0]), np.array([0.0]))[0] > 12.698 + 5.0


def _gains(model, n=20000, distance_m=100.0, ap=0):
    radio = Radio(path_loss=model)
    prop = Propagation(radio, Cells(), RngTree(7), n)
    x, y = np.full(n, distance_m), np.zeros(n)
    return prop, prop.gain_db(ap, x, y)


def test_each_pairs_state_is_drawn_with_the_los_probability():
    model = Uma()
    prop, gain = _gains(model)
    los = prop.los(model, 0, np.full(len(gain), 100.0))
    p = 0.34767
    assert abs(los.mean() - p) < 4 * np.sqrt(p * (1 - p) / len(gain))
    # the mean gain mixes the two states' losses (the shadow fading has mean 0)
    expected = -(p * 83.138 + (1 - p) * 103.038)
    spread = np.sqrt(p * (1 - p) * 19.9 ** 2 + p * 16 + (1 - p) * 36) / np.sqrt(len(gain))
    assert abs(gain.mean() - expected) < 4 * spread


def test_shadow_fading_follows_the_states_standard_deviation():
    _, gain = _gains(Uma(los="never"))
    assert np.mean(-gain) == pytest.approx(103.038, abs=0.15)
    assert np.std(gain) == pytest.approx(6.0, rel=0.03)
    _, gain = _gains(Umi(los="always"))
    assert np.std(gain) == pytest.approx(4.0, rel=0.03)


def test_a_client_that_moves_away_keeps_its_draw_and_turns_nlos_by_the_probability():
    model = Uma()
    prop, _ = _gains(model, n=5000)
    los_near = prop.los(model, 0, np.full(5000, 100.0))
    los_far = prop.los(model, 0, np.full(5000, 400.0))
    # the same uniform draw per client: LoS at 400 m implies LoS at 100 m
    assert los_far.any() and np.all(los_near[los_far]) and los_far.sum() < los_near.sum()
    p_far = model.los_probability(np.array([400.0]))[0]
    assert abs(los_far.mean() - p_far) < 4 * np.sqrt(p_far * (1 - p_far) / 5000)


@pytest.mark.parametrize("model, field", [
    (lambda: Uma(carrier_hz=200e9), "carrier_hz"), (lambda: Rma(carrier_hz=40e9), "carrier_hz"),
    (lambda: Umi(h_ut_m=0.0), "h_ut_m"), (lambda: Uma(h_bs_m=0.0), "h_bs_m"),
    (lambda: Uma(indoor_fraction=1.5), "indoor_fraction"),
    (lambda: Radio(path_loss=Uma(), shadowing_db=8.0), "shadowing_db"),
])
def test_bad_settings_name_the_field(model, field):
    with pytest.raises(ConfigError, match=field):
        model()
