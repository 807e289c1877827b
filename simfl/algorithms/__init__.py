"""Aggregation rules and client samplers, built from their configs."""

from __future__ import annotations

from simfl.algorithms.fedar import FedAR
from simfl.algorithms.fedavg import FedAvg
from simfl.algorithms.fedavg_is import FedAvgIS
from simfl.algorithms.fedlaavg import FedLaAvg
from simfl.algorithms.fedvarp import FedVARP
from simfl.algorithms.mifa import Mifa
from simfl.algorithms.samplers import AllAvailableSampler, UniformSampler
from simfl.algorithms.scaffold import Scaffold
from simfl.core import config as cfg
from simfl.core.config import server

AGGREGATORS = {
    cfg.FedAvg: FedAvg,
    server.FedAvgIS: FedAvgIS,
    server.FedAvgS: FedAvg,
    server.Mifa: Mifa,
    server.FedAR: FedAR,
    server.FedVARP: FedVARP,
    server.FedLaAvg: FedLaAvg,
    server.Scaffold: Scaffold,
}
SAMPLERS = {cfg.Uniform: UniformSampler, cfg.AllAvailable: AllAvailableSampler}


def build_aggregator(config: cfg.Aggregator, local_lr: float):
    """The aggregator for ``config``; ``local_lr`` (task.lr) converts deltas to normalised updates."""
    return AGGREGATORS[type(config)](config, local_lr)


def build_sampler(config: cfg.Sampler):
    return SAMPLERS[type(config)](config)
