"""Aggregation rules and client samplers, built from their configs."""

from __future__ import annotations

from simfl.algorithms.cvar import CVaR
from simfl.algorithms.fedar import FedAR
from simfl.algorithms.fedavg import FedAvg
from simfl.algorithms.fedavg_is import FedAvgIS
from simfl.algorithms.fedlaavg import FedLaAvg
from simfl.algorithms.fedprox import FedProx
from simfl.algorithms.fedvarp import FedVARP
from simfl.algorithms.mifa import Mifa
from simfl.algorithms.fedgs import FedGSSampler
from simfl.algorithms.power_of_choice import PowerOfChoiceSampler
from simfl.algorithms.samplers import (AllAvailableSampler, LongestAbsentSampler, MdSampler,
                                       UniformSampler)
from simfl.algorithms.scaffold import Scaffold
from simfl.core import config as cfg
from simfl.core.config import server
from simfl.core.protocols import ClientProbe

AGGREGATORS = {
    cfg.FedAvg: FedAvg,
    server.FedAvgIS: FedAvgIS,
    server.FedAvgS: FedAvg,
    server.Mifa: Mifa,
    server.FedAR: FedAR,
    server.FedVARP: FedVARP,
    server.FedLaAvg: FedLaAvg,
    server.Scaffold: Scaffold,
    server.FedProx: FedProx,
    server.CVaR: CVaR,
}
SAMPLERS = {cfg.Uniform: UniformSampler, cfg.AllAvailable: AllAvailableSampler,
            cfg.Md: MdSampler, cfg.PowerOfChoice: PowerOfChoiceSampler, cfg.FedGS: FedGSSampler,
            cfg.LongestAbsent: LongestAbsentSampler}


def build_aggregator(config: cfg.Aggregator, local_lr: float):
    """The aggregator for ``config``; ``local_lr`` (task.lr) converts deltas to normalised updates."""
    return AGGREGATORS[type(config)](config, local_lr)


def build_sampler(config: cfg.Sampler, probe: ClientProbe | None = None):
    """The sampler for ``config``; ``probe`` lets samplers that query clients do so."""
    return SAMPLERS[type(config)](config, probe)
