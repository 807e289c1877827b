"""The scenario tree: frozen, validated dataclasses with units in field names."""

from simfl.core.config.network import (Channel, Distance, ErasureChannel, FixedRate,
                                       GilbertElliottChannel, IdealChannel, IdealMac, Mac, Network,
                                       Rate, RayleighChannel, ShannonRate)
from simfl.core.config.node import Choice, Node
from simfl.core.config.population import Always, Availability, Bernoulli, Compute, Population
from simfl.core.config.run import Run
from simfl.core.config.scenario import Scenario, apply_overrides, load_scenario, parse_override
from simfl.core.config.server import (Aggregator, AllAvailable, FedAR, FedAvg, FedAvgIS, FedAvgS,
                                      FedLaAvg, FedVARP, Mifa, Sampler, Scaffold, Server, Uniform)
from simfl.core.config.task import (Blobs, Dataset, Digits, Dirichlet, Iid, Logreg, Mlp, Model,
                                    Native, Partition, Shards, Synthetic, Task)

__all__ = [
    "Aggregator", "AllAvailable", "Always", "Availability", "Bernoulli", "Blobs", "Channel",
    "Choice", "Compute", "Dataset", "Digits", "Dirichlet", "Distance", "ErasureChannel", "FedAR",
    "FedAvg", "FedAvgIS", "FedAvgS", "FedLaAvg", "FedVARP", "FixedRate", "GilbertElliottChannel",
    "IdealChannel", "IdealMac", "Iid", "Logreg", "Mac", "Mifa", "Mlp", "Model", "Native",
    "Network", "Node", "Partition", "Population", "Rate", "RayleighChannel", "Run", "Sampler",
    "Scaffold", "Scenario", "Server", "ShannonRate", "Shards", "Synthetic", "Task", "Uniform",
    "apply_overrides", "load_scenario", "parse_override",
]
