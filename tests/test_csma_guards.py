"""The DCF's edges that used to crash: a round nobody contended in, and a wake left set
when the last contenders leave before it."""

import numpy as np
import simpy

import simfl
from simfl.core.config import apply_overrides, load_scenario, parse_override
from simfl.core.config.csma import CsmaCaMac
from simfl.core.rng import RngTree
from simfl.sim.mac.kinds import build_mac


def test_a_wake_left_set_when_every_contender_leaves_is_void():
    env = simpy.Environment()
    mac = build_mac(CsmaCaMac(phy_rate_bps=2e6, rts_cts=True, cw_min=1, retry_limit=None),
                    env, RngTree(0), 2)
    mac.open_round(0, np.arange(2))
    events = [mac.request(c) for c in range(2)]
    env.run(until=1e-4)  # both back off, the next busy period's wake is set
    assert not any(e.triggered for e in events)
    mac.leave(0)
    mac.leave(1)
    env.run(until=1.0)  # the wake fires on an empty medium: nothing happens
    assert env.now == 1.0 and mac.close_round()


def test_a_csma_round_that_nobody_reaches_the_uplink_in_closes(tmp_path):
    scenario = apply_overrides(load_scenario("quickstart"), [parse_override(s) for s in (
        "run.rounds=2", "run.timing_only=true", "server.deadline_s=0.1",
        'network.mac={"kind":"csma_ca","phy_rate_bps":2e6}')])
    result = simfl.run(scenario, tmp_path / "r")
    assert result.summary["rounds"] == 2
    assert all(not o.received for o in result.outcomes)
