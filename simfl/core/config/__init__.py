"""The scenario tree: frozen, validated dataclasses with units in field names."""

from simfl.core.config.network import (Channel, ErasureChannel, FixedRate, IdealChannel, IdealMac,
                                       Mac, Network, Rate)
from simfl.core.config.node import Choice, Node
from simfl.core.config.population import Always, Availability, Bernoulli, Compute, Population
from simfl.core.config.run import Run
from simfl.core.config.scenario import Scenario, apply_overrides, load_scenario, parse_override
from simfl.core.config.server import (Aggregator, AllAvailable, FedAvg, Sampler, Server,
                                      Uniform)
from simfl.core.config.task import (Blobs, Dataset, Digits, Dirichlet, Iid, Logreg, Mlp, Model,
                                    Native, Partition, Shards, Synthetic, Task)

__all__ = [
    "Aggregator", "AllAvailable", "Always", "Availability", "Bernoulli", "Blobs", "Channel",
    "Choice", "Compute", "Dataset", "Digits", "Dirichlet", "ErasureChannel", "FedAvg",
    "FixedRate", "IdealChannel", "IdealMac", "Iid", "Logreg", "Mac", "Mlp", "Model", "Native",
    "Network", "Node", "Partition", "Population", "Rate", "Run", "Sampler", "Scenario", "Server",
    "Shards", "Synthetic", "Task", "Uniform", "apply_overrides", "load_scenario",
    "parse_override",
]
