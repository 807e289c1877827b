"""The contract of every registered fading law and mobility model of the shared radio.

Fading (``build_fading(cfg, direction, rngs, n)``): for every memory (a fresh draw per
attempt, block fading, Gauss-Markov), the gains are finite, non-negative, of mean 1,
and the same for the same seed and queries. Mobility (``build_mover(cfg, radio_map,
propagation, rngs)``): after any advance, positions stay in the model's disc, the
radio map's association, gain and power follow the new positions, and the same seed
gives the same paths.
"""

import dataclasses
import math

import numpy as np
import pytest

from simfl.core.config.placement import DiscPlacement
from simfl.core.config.cells import Cells
from simfl.core.config.radio import Radio
from simfl.core.rng import RngTree
from simfl.sim.radio.fading import build_fading
from simfl.sim.radio.mobility import build_mover
from simfl.sim.radio.propagation import build_radio_map

from .kinds import config_of, kinds

N_CLIENTS = 40
MEMORIES = ({"coherence_s": 0.0}, {"coherence_s": 0.05}, {"doppler_hz": 30.0})
#: kinds that need more than their defaults
FADING_CASES: dict = {}
MOBILITY_CASES: dict = {}


def _gains(cfg, seed: int = 4) -> np.ndarray:
    fading = build_fading(cfg, "uplink", RngTree(seed), N_CLIENTS)
    # times 1 s apart: the windows and the Gauss-Markov steps are nearly independent
    return np.array([fading.gain(c, 1.0 * t + 0.001 * c) for t in range(150)
                     for c in range(N_CLIENTS)])


@pytest.mark.parametrize("name", kinds("fading"))
@pytest.mark.parametrize("memory", MEMORIES, ids=lambda m: next(iter(m)) + str(m[next(iter(m))]))
def test_fading_contract(name, memory):
    cfg = dataclasses.replace(config_of("fading", name, FADING_CASES), **memory)
    gains = _gains(cfg)
    assert np.isfinite(gains).all() and (gains >= 0).all()
    se = gains.std(ddof=1) / math.sqrt(gains.size)
    assert abs(gains.mean() - 1.0) <= 4 * se + 1e-12, (name, memory, gains.mean(), se)
    assert np.array_equal(gains, _gains(cfg)), "the same seed gives the same gains"
    if gains.std() > 0:
        assert not np.array_equal(gains, _gains(cfg, seed=5)), "another seed, other gains"


def _moved(cfg, seed: int = 2, times=(0.0, 3.0, 3.5, 40.0, 41.0, 400.0)):
    rngs = RngTree(seed)
    radio, cells = Radio(), Cells(access_points=((0.0, 0.0), (60.0, 0.0)))
    radio_map, propagation = build_radio_map(DiscPlacement(radius_m=80.0), cells, radio,
                                             N_CLIENTS, rngs)
    mover = build_mover(cfg, radio_map, propagation, rngs)
    path = []
    for t_s in times:
        mover.advance(t_s)
        x, y = radio_map.x_m.copy(), radio_map.y_m.copy()
        radius = getattr(cfg, "radius_m", 80.0)
        assert (np.hypot(x, y) <= max(radius, 80.0) * (1 + 1e-9)).all(), (cfg.kind, t_s)
        ap, gain_db = propagation.assign(x, y)
        assert np.array_equal(radio_map.ap, ap) and np.allclose(radio_map.gain_db, gain_db)
        assert np.allclose(radio_map.tx_power_dbm, propagation.tx_power_dbm(gain_db))
        path.append((x, y))
    return path


@pytest.mark.parametrize("name", kinds("mobility"))
def test_mobility_contract(name):
    cfg = config_of("mobility", name, MOBILITY_CASES)
    path = _moved(cfg)
    again = _moved(cfg)
    assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
               for a, b in zip(path, again)), "the same seed gives the same paths"
    # asked at fewer times, the positions at the last one are the same (lazy, exact)
    sparse = _moved(cfg, times=(0.0, 400.0))
    assert np.allclose(sparse[-1][0], path[-1][0]) and np.allclose(sparse[-1][1], path[-1][1])
