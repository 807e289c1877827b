"""The contracts of the shared radio's geometry, for every registered kind.

placements     ``place(cfg, n, rng, cells)`` (cells: a hexagonal layout, for the kinds that
               place by cell) gives two finite float arrays of n positions, the
               same for the same seed, different clients at different places (a grid or
               a continuous law never stacks two clients).
path_loss      ``loss_db(d)`` is finite, does not decrease with distance, and is the same
               for a scalar as inside an array.
power_control  a client never transmits above ``tx_power_dbm``; a weaker path gain never
               gets a lower power (more loss, at least as much power, up to the cap).
radio_links    ``build_radio_link(model, ...)``: without fading a strong client's attempt
               arrives after bits / ``mean_rate_bps`` (the rate a policy plans with); a
               stronger client never plans a lower rate; under fading every attempt has
               a finite airtime and the same seed gives the same deliveries.
"""

import numpy as np
import pytest

from simfl.core.config.fading import RayleighFading
from simfl.core.config.network import IdealChannel
from simfl.core.config.placement import FilePlacement, GridPlacement
from simfl.core.config.cells import Cells, Hexagonal
from simfl.core.config.radio import Radio
from simfl.core.rng import RngTree
from simfl.sim.radio.fading import build_fading
from simfl.sim.radio.link import build_radio_link
from simfl.sim.radio.placement import place
from simfl.sim.radio.propagation import Propagation, build_radio_map

from .kinds import config_of, kinds

N = 200


@pytest.fixture(scope="module")
def position_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("placement") / "positions.csv"
    rows = "\n".join(f"{i},{3.0 * i},{-2.0 * i}" for i in range(N))
    path.write_text(f"client,x_m,y_m\n{rows}\n")
    return path


@pytest.mark.parametrize("name", kinds("placements"))
def test_every_placement_places_every_client_once_and_the_same_for_a_seed(name, position_file):
    cases = {"file": lambda: FilePlacement(path=str(position_file))}
    cfg = config_of("placements", name, cases)
    cells = Cells(hexagonal=Hexagonal(rings=1, isd_m=200.0))
    x, y = place(cfg, N, RngTree(3).stream("placement"), cells)
    again = place(cfg, N, RngTree(3).stream("placement"), cells)
    assert x.shape == y.shape == (N,) and x.dtype == y.dtype == np.float64
    assert np.isfinite(x).all() and np.isfinite(y).all()
    assert np.array_equal(x, again[0]) and np.array_equal(y, again[1])
    assert len({(a, b) for a, b in zip(x.tolist(), y.tolist())}) == N


@pytest.mark.parametrize("name", kinds("path_loss"))
def test_every_path_loss_grows_with_distance(name):
    cfg = config_of("path_loss", name, {})
    d = np.array([0.0, 0.5, 1.0, 2.0, 10.0, 100.0, 1e4])
    loss = cfg.loss_db(d)
    assert loss.shape == d.shape and np.isfinite(loss).all()
    assert (np.diff(loss) >= 0).all() and loss[-1] > loss[3]
    assert float(cfg.loss_db(np.array(100.0))) == pytest.approx(loss[5])


@pytest.mark.parametrize("name", kinds("power_control"))
def test_every_power_control_stays_under_the_cap_and_pays_more_for_weaker_paths(name):
    radio = Radio(power_control=config_of("power_control", name, {}), tx_power_dbm=20.0)
    propagation = Propagation(radio, Cells(), RngTree(1), 5)
    gains = np.array([-60.0, -90.0, -110.0, -130.0, -160.0])
    power = propagation.tx_power_dbm(gains)
    assert power.shape == gains.shape
    assert (power <= radio.tx_power_dbm).all()
    sending = np.isfinite(power)
    assert sending[0], "a strong path always transmits"
    assert (np.diff(power[sending]) >= 0).all()


def _radio_link(model, fading, seed: int = 3, n: int = 25):
    rngs = RngTree(seed)
    radio = Radio(fading=fading)
    radio_map, _ = build_radio_map(GridPlacement(spacing_m=100.0), Cells(), radio, n, rngs)
    gains = build_fading(fading, "uplink", rngs, n)
    return build_radio_link(model, IdealChannel(), radio_map, "uplink", gains, 3.0, rngs), radio_map


@pytest.mark.parametrize("name", kinds("radio_links"))
def test_every_radio_link_plans_and_sends_at_its_rate(name):
    model = config_of("radio_links", name, {})
    link, radio_map = _radio_link(model, Radio().fading)
    n_bytes = 10_000
    order = np.argsort(radio_map.mean_snr_db(np.arange(25)))
    rates = [link.mean_rate_bps(int(c)) for c in order]
    assert all(r > 0 and np.isfinite(r) for r in rates)
    assert (np.diff(rates) >= 0).all(), "a stronger client plans at least the same rate"
    strongest = int(order[-1])  # at the access point (90 dB): every kind gets through
    delivery = link.transmit(0.0, n_bytes, RngTree(1).stream("x"), client=strongest)
    assert delivery.ok
    assert delivery.airtime_s == pytest.approx(8 * n_bytes / link.mean_rate_bps(strongest))

    def deliveries(seed):
        faded, _ = _radio_link(model, RayleighFading(), seed)
        rng = RngTree(seed).stream("channel/uplink")
        return [faded.transmit(0.1 * t, n_bytes, rng, client=c)
                for t in range(20) for c in range(25)]

    sent = deliveries(5)
    assert all(np.isfinite(d.airtime_s) and d.airtime_s > 0 for d in sent)
    assert sent == deliveries(5), "the same seed gives the same deliveries"
