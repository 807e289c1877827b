"""simfl: a discrete-event simulator of federated learning over unreliable networks.

A scenario script builds a :class:`Scenario`; ``simfl run`` (or :func:`run`) simulates
it and writes a run directory.
"""

from simfl.core.config import (AllAvailable, Always, Bernoulli, Blobs, Compute, Digits, Dirichlet,
                               Distance, ErasureChannel, FedAR, FedAvg, FedAvgIS, FedAvgS,
                               FedLaAvg, FedVARP, FixedRate, GilbertElliottChannel, IdealChannel,
                               IdealMac, Iid, Logreg, Mifa, Mlp, Native, Network, Population,
                               RayleighChannel, Run, Scaffold, Scenario, Server, ShannonRate, Shards,
                               Synthetic, Task, Uniform, apply_overrides, load_scenario)
from simfl.core.config import CVaR, FedProx, Quadratic
from simfl.core.config import Mnist5k
from simfl.core.errors import ConfigError, SimflError

__version__ = "0.1.0"


def run(scenario: Scenario, out_dir=None, progress=None):
    """Simulate ``scenario``; returns a RunResult (run directory, summary, outcomes)."""
    from simfl.experiment import run_scenario

    return run_scenario(scenario, out_dir, progress)


__all__ = [
    "AllAvailable", "Always", "Bernoulli", "Blobs", "Compute", "ConfigError", "Digits",
    "Dirichlet", "Distance", "ErasureChannel", "FedAR", "FedAvg", "FedAvgIS", "FedAvgS",
    "FedLaAvg", "FedVARP", "FixedRate", "GilbertElliottChannel", "IdealChannel", "IdealMac", "Iid",
    "Logreg", "Mifa", "Mlp", "Native", "Network", "Population", "RayleighChannel", "Run",
    "Scaffold", "Scenario", "Server", "ShannonRate", "Shards", "SimflError", "Synthetic", "Task",
    "Uniform", "apply_overrides", "load_scenario", "run",
    "CVaR", "FedProx", "Quadratic",
    "Mnist5k",
]
