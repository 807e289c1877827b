"""The round policy of a run (``server.policy``), wired to its simulation."""

from __future__ import annotations

import numpy as np

from simfl.core.config import Scenario
from simfl.core.registry import implementation_of
from simfl.core.round_policy import Dvfs
from simfl.sim.rounds.resources import RoundResources
from simfl.sim.simulation import Simulation


def build_resources(scenario: Scenario, sim: Simulation, samples_per_s: np.ndarray
                    ) -> RoundResources | None:
    """What runs ``server.policy``'s decisions in ``sim`` (None for ``none``)."""
    policy_cfg = scenario.server.policy
    if policy_cfg.kind == "none":
        return None
    import simfl.algorithms.policies  # noqa: F401  (names the built-in policies' classes)

    policy = implementation_of(policy_cfg, "server.policy.kind")(policy_cfg)
    n_clients = scenario.task.n_clients
    radio, compute = scenario.network.radio, scenario.population.compute
    caps = None if radio is None else np.broadcast_to(
        np.asarray(radio.tx_power_dbm, dtype=float), (n_clients,)).copy()
    dvfs = None if compute.cpu_hz is None else Dvfs(
        np.asarray(samples_per_s * compute.cycles_per_sample, dtype=float),
        np.asarray(sim.work_samples, dtype=float), compute.cycles_per_sample, compute.kappa)
    return RoundResources(policy, sim.devices, n_clients, radio_map=sim.radio_map,
                          max_tx_power_dbm=caps, dvfs=dvfs, broadcast=sim.loops.broadcast)
