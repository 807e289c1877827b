"""simfl's TR 38.901 path loss and LoS probability against NVIDIA Sionna's (the optional
``sionna`` test extra, ``sionna-no-rt``): UMa, UMi, RMa and InH, LoS and NLoS, over a grid
of distances and carrier frequencies. Skipped when Sionna is not installed."""

import numpy as np
import pytest

from simfl.core.config import Inh, Rma, Uma, Umi

torch = pytest.importorskip("torch")
tr38901 = pytest.importorskip("sionna.phy.channel.tr38901")

DISTANCES_M = np.array([12.0, 35.0, 100.0, 300.0, 700.0, 1500.0, 4000.0])
FREQS_HZ = (0.9e9, 3.5e9, 6e9, 28e9)


def _sionna(kind: str, freq_hz: float):
    array = tr38901.PanelArray(num_rows_per_panel=1, num_cols_per_panel=1,
                               polarization="single", polarization_type="V",
                               antenna_pattern="omni", carrier_frequency=freq_hz)
    common = dict(enable_shadow_fading=False)
    if kind == "uma":
        return tr38901.UMaScenario(freq_hz, "low", array, array, "uplink", **common)
    if kind == "umi":
        return tr38901.UMiScenario(freq_hz, "low", array, array, "uplink", **common)
    if kind == "rma":
        return tr38901.RMaScenario(freq_hz, array, array, "uplink", **common)
    return tr38901.InHScenario(freq_hz, "mixed", array, array, "uplink", **common)


def _theirs(kind: str, model, d2d_m: np.ndarray, los: bool):
    scenario = _sionna(kind, model.carrier_hz)
    n = len(d2d_m)
    ut = torch.stack([torch.tensor(d2d_m, dtype=torch.float32), torch.zeros(n),
                      torch.full((n,), model.h_ut_m)], -1)[None]
    bs = torch.tensor([[[0.0, 0.0, model.h_bs_m]]])
    zero = torch.zeros(1, n, 3)
    indoor = torch.full((1, n), kind == "inh", dtype=torch.bool)  # InH: every client indoors
    scenario.set_topology(ut, bs, zero, torch.zeros(1, 1, 3), zero, indoor, los)
    return (scenario.basic_pathloss.squeeze().double().numpy(),
            scenario.los_probability.squeeze().double().numpy())


@pytest.mark.parametrize("freq_hz", FREQS_HZ)
@pytest.mark.parametrize("kind, make, distances", [
    ("uma", Uma, DISTANCES_M), ("umi", Umi, DISTANCES_M),
    ("rma", Rma, DISTANCES_M[DISTANCES_M <= 4000]), ("inh", Inh, np.array([1.5, 4.0, 9.0, 30.0, 90.0])),
])
def test_path_loss_and_los_probability_agree_with_sionna(kind, make, distances, freq_hz):
    model = make(carrier_hz=freq_hz)
    for los in (True, False):
        theirs, p_theirs = _theirs(kind, model, distances, los)
        ours = model.pair_loss_db(distances, np.full(len(distances), los))
        np.testing.assert_allclose(ours, theirs, atol=0.01, err_msg=f"{kind} los={los}")
    np.testing.assert_allclose(model.los_probability(distances), p_theirs, atol=1e-5)
