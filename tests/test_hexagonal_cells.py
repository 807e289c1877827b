"""Hexagonal multi-cell layouts: sites, sectors and their antenna pattern, wraparound,
and clients dropped in the cells."""

import math

import numpy as np
import pytest

from simfl.core.config import Cells, Hexagonal, HexagonalPlacement, Radio
from simfl.core.config.cells import sector_gain_db
from simfl.core.errors import ConfigError
from simfl.core.rng import RngTree
from simfl.sim.radio.placement import place
from simfl.sim.radio.propagation import Propagation


@pytest.mark.parametrize("rings, n_sites", [(0, 1), (1, 7), (2, 19), (3, 37)])
def test_rings_of_sites_isd_apart(rings, n_sites):
    sites = np.asarray(Hexagonal(rings=rings, isd_m=500.0).sites_m())
    assert len(sites) == n_sites and tuple(sites[0]) == (0.0, 0.0)
    if rings:
        d = np.hypot(*(sites[:, None, :] - sites[None, :, :]).transpose(2, 0, 1))
        nearest = np.sort(d, axis=1)[:, 1]
        assert nearest == pytest.approx(np.full(n_sites, 500.0))


def test_wraparound_images_lie_sqrt_n_isd_away():
    for rings, n in ((1, 7), (2, 19)):
        images = np.asarray(Hexagonal(rings=rings, isd_m=100.0).images_m())
        assert len(images) == 7
        assert np.hypot(images[1:, 0], images[1:, 1]) == pytest.approx(np.full(6, 100.0 * math.sqrt(n)))


def test_sector_pattern_of_the_3gpp_element():
    # 8 dBi at boresight, 3 dB down at half the 65-degree beamwidth, at most 30 dB down
    assert sector_gain_db(np.array([0.0, 32.5, 180.0, 360.0 + 10.0])) == pytest.approx(
        [8.0, 5.0, -22.0, 8.0 - 12.0 * (10.0 / 65.0) ** 2])


def test_a_sectored_client_is_served_by_the_sector_facing_it_and_edges_wrap_around():
    cells = Cells(hexagonal=Hexagonal(rings=1, isd_m=500.0, sectors=3))
    assert len(cells.access_points) == 21
    prop = Propagation(Radio(), cells, RngTree(1), 3)
    # 100 m from the centre site at 30, 150 and 270 degrees: sectors 0, 1 and 2
    angles = np.radians([30.0, 150.0, 270.0])
    ap, _ = prop.assign(100.0 * np.cos(angles), 100.0 * np.sin(angles))
    assert list(ap) == [0, 1, 2]
    # beyond the layout's edge on the +x side, the nearest site is an image of a far one
    edge = Propagation(Radio(), Cells(hexagonal=Hexagonal(rings=1, isd_m=500.0)), RngTree(1), 1)
    dx, dy = edge.offsets_m(4, np.array([1000.0]), np.array([0.0]))  # site 4 sits at -x
    assert np.hypot(dx, dy)[0] < 1000.0


def test_clients_are_dropped_uniformly_in_the_hexagons_away_from_their_site():
    cells = Cells(hexagonal=Hexagonal(rings=1, isd_m=200.0))
    x, y = place(HexagonalPlacement(min_m=35.0), 20000, np.random.default_rng(4), cells)
    sites = np.asarray(cells.hexagonal.sites_m())
    d = np.hypot(x[:, None] - sites[None, :, 0], y[:, None] - sites[None, :, 1])
    assert d.min(axis=1).min() >= 35.0 - 1e-9
    share = np.bincount(d.argmin(axis=1), minlength=7) / len(x)
    assert np.abs(share - 1 / 7).max() < 4 * math.sqrt((1 / 7) * (6 / 7) / len(x))
    # uniform in area: the mean distance to the site, for a hexagon of apothem 100 m less the
    # 35 m disc, is (integral of r over the area) / area; about 60.6 m by numeric integration
    ring = d.min(axis=1)
    area_mean = _hexagon_mean_distance(100.0, 35.0)
    assert ring.mean() == pytest.approx(area_mean, abs=0.5)


def _hexagon_mean_distance(apothem, r_min, n=801):
    """The mean distance to the centre over a hexagon minus a disc, on a fine grid."""
    half_h = apothem * 2 / math.sqrt(3)
    gx, gy = np.meshgrid(np.linspace(-apothem, apothem, n), np.linspace(-half_h, half_h, n))
    u, v = 0.5 * gx + math.sqrt(3) / 2 * gy, 0.5 * gx - math.sqrt(3) / 2 * gy
    r = np.hypot(gx, gy)
    inside = (np.abs(gx) <= apothem) & (np.abs(u) <= apothem) & (np.abs(v) <= apothem) & (r >= r_min)
    return float(r[inside].mean())


@pytest.mark.parametrize("make, field", [
    (lambda: Hexagonal(isd_m=5.0), "isd_m"), (lambda: Hexagonal(sectors=2), "sectors"),
    (lambda: Hexagonal(rings=9), "rings"),
    (lambda: Cells(access_points=((1.0, 2.0),), hexagonal=Hexagonal()), "access_points"),
])
def test_bad_layouts_name_the_field(make, field):
    with pytest.raises(ConfigError, match=field):
        make()


def test_placement_needs_the_layout_and_room_in_the_cell():
    with pytest.raises(ConfigError, match="hexagonal"):
        place(HexagonalPlacement(), 5, np.random.default_rng(1), Cells())
    with pytest.raises(ConfigError, match="min_m"):
        place(HexagonalPlacement(min_m=300.0), 5, np.random.default_rng(1),
              Cells(hexagonal=Hexagonal(isd_m=500.0)))
