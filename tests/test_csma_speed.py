"""The fast paths of the IEEE 802.11 DCF: backoff draws taken in blocks, radio time summed
and charged once with infinite energy, busy periods settled ahead of the clock. Each must
give what the plain path gives: the same draws, the same arrivals to the last bit, the
same energy up to float rounding."""

import numpy as np
import pytest

from conftest import everyone, make_sim
from simfl.core.config import Battery, CsmaCaMac, Energy
from simfl.sim.energy.battery import Batteries
from simfl.sim.energy.infinite import InfiniteEnergy
from simfl.sim.mac.csma import access
from simfl.sim.mac.csma.backoff import Backoffs


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_backoffs_are_numpy_single_draws(seed):
    windows = np.random.default_rng(50 + seed).choice(
        [1, 2, 3, 7, 32, 1000, 1024, 2 ** 30, 3 * 2 ** 30 + 1, 2 ** 32], size=20_000)
    single = np.random.default_rng(seed)
    blocks = Backoffs(np.random.default_rng(seed))
    assert [blocks.draw(int(w)) for w in windows] == [int(single.integers(0, int(w)))
                                                      for w in windows]


def _sim(battery, n, deadline_s, **mac):
    cfg = CsmaCaMac(**{"phy_rate_bps": 1e6, "mpdu_payload_bytes": 200, "cw_min": 8,
                       "cw_max": 64, "retry_limit": 4, **mac})
    energy = Energy(idle_w=0.3, compute_w=1.0, tx_w=2.0, rx_w=0.7)
    meter = (Batteries(n, Battery(capacity_j=1e12), energy) if battery else None)
    sim = make_sim(n_clients=n, compute_s=(1.0, 1.0, 1.2, 1.0001), deadline_s=deadline_s,
                   battery=meter, mac=cfg)
    if not battery:  # infinite energy at the same powers
        sim.energy = sim.devices.energy = InfiniteEnergy(n, energy)
        sim.energy.bind(sim.env, sim.late.timeout, sim.event_log.record)
        sim.mac.bind_upload(sim.energy, sim.links.uplink, sim.model_bytes)
    return sim


@pytest.mark.parametrize("deadline_s, mac", [(10.0, {}), (1.08, {}),
                                             (1.05, {"rts_cts": True, "retry_limit": None})])
def test_summed_radio_time_run_ahead_equals_switching_on_the_clock(deadline_s, mac,
                                                                    monkeypatch):
    # batteries too large to run out keep the switch at every busy period, on the clock
    ends = []
    plain_end = access.CsmaCa._end
    monkeypatch.setattr(access.CsmaCa, "_end", lambda self: (ends.append(1), plain_end(self)))
    fast, exact = _sim(False, 12, deadline_s, **mac), _sim(True, 12, deadline_s, **mac)
    assert fast.mac.airtime is not None and exact.mac.airtime is None
    for round in range(2):
        ends.clear()
        a = fast.run_round(round, everyone)
        fast_ends, _ = len(ends), ends.clear()
        b = exact.run_round(round, everyone)
        busy_periods = sum(s.successes + s.collision_slots for s in b.mac_slots)
        assert busy_periods - 1 <= len(ends) <= busy_periods and busy_periods > 20
        assert fast_ends < busy_periods / 4  # most busy periods never reach the clock
        assert [(r.client, r.t_s) for r in a.received] == [(r.client, r.t_s) for r in b.received]
        assert [(m.client, m.reason, m.t_s) for m in a.missing] == \
            [(m.client, m.reason, m.t_s) for m in b.missing]
        assert a.mac_slots == b.mac_slots and a.t_close_s == b.t_close_s
        assert a.energy_j == pytest.approx(b.energy_j, rel=1e-9)
    np.testing.assert_allclose(fast.energy.used_j, exact.energy.used_j, rtol=1e-9)
    assert (fast.energy.used_j > 0).all()
