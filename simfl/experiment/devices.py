"""Each client's training speed (samples per second) and, with DVFS, its computing power.

``population.compute`` states the median speed in samples per second, in FLOP/s (or a
named device class), or as a CPU clock; one lognormal factor per client, drawn once from
``population/compute``, spreads it across the population.
"""

from __future__ import annotations

import numpy as np

from simfl.core.config import Scenario
from simfl.core.rng import RngTree


def client_speeds(scenario: Scenario, rngs: RngTree) -> tuple[np.ndarray, np.ndarray | None]:
    """(samples per second of every client, its computing power in W or None).

    FLOP/s become samples per second through the model's training FLOPs per sample
    (:func:`simfl.train.flops.flop_per_sample`, counted once); a clock f becomes
    f / ``cycles_per_sample``, and the client then draws kappa f^3 watts while computing,
    so a job of D samples costs kappa c D f^2 joules in c D / f seconds.
    """
    compute, task = scenario.population.compute, scenario.task
    z = rngs.stream("population/compute").standard_normal(task.n_clients)
    if compute.cpu_hz is not None:
        hz = compute.cpu_hz * np.exp(compute.sigma * z)
        return hz / compute.cycles_per_sample, compute.kappa * hz ** 3
    flops = compute.median_flops_per_s
    if flops is not None:
        from simfl.train.flops import flop_per_sample

        return flops * np.exp(compute.sigma * z) / flop_per_sample(task), None
    return compute.median_samples_per_s * np.exp(compute.sigma * z), None
