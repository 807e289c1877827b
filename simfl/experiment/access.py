"""The medium access a run's uploads go through: the configured MAC, or the single
analog slot of over-the-air aggregation when the aggregator is ``aircomp``."""

from __future__ import annotations

import simpy

from simfl.core.config import AirComp, Scenario
from simfl.core.rng import RngTree
from simfl.sim.mac.aircomp import build_aircomp_access
from simfl.sim.mac.kinds import build_mac
from simfl.sim.radio.capture import air_of
from simfl.sim.radio.radio_map import RadioMap


def build_access(scenario: Scenario, env: simpy.Environment, rngs: RngTree, charge,
                 radio_map: RadioMap | None):
    """The MAC of ``scenario``'s uploads; ``charge`` books each transmission's energy."""
    n_clients, net_cfg, server = scenario.task.n_clients, scenario.network, scenario.server
    if isinstance(server.algorithm, AirComp):
        return build_aircomp_access(server.algorithm, env, rngs, n_clients, server.deadline_s,
                                    net_cfg.radio and net_cfg.radio.bandwidth_hz, radio_map)
    return build_mac(net_cfg.mac, env, rngs, n_clients, charge, air=air_of(net_cfg, radio_map))
