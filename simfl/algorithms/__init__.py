"""Aggregation rules and client samplers, built from their configs."""

from __future__ import annotations

from simfl.algorithms.cvar import CVaR
from simfl.algorithms.fedar import FedAR
from simfl.algorithms.fedavg import FedAvg
from simfl.algorithms.fedavg_is import FedAvgIS
from simfl.algorithms.fedavg_s import FedAvgWait
from simfl.algorithms.fedlaavg import FedLaAvg
from simfl.algorithms.fedprox import FedProx
from simfl.algorithms.fedvarp import FedVARP
from simfl.algorithms.mifa import Mifa
from simfl.algorithms.fedgs import FedGSSampler
from simfl.algorithms.power_of_choice import PowerOfChoiceSampler
from simfl.algorithms.samplers import (AllAvailableSampler, LongestAbsentSampler, MdSampler,
                                       UniformSampler, WaitGroupSampler)
from simfl.algorithms.scaffold import Scaffold
from simfl.core import config as cfg
from simfl.core.config import server
from simfl.core.config.sampler import WaitGroup
from simfl.core.protocols import ClientProbe
from simfl.core.rng import RngTree

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
#: the aggregators whose server step is eta_g * eta_l: they follow ``server.lr_schedule``
SCHEDULED = (server.Mifa, server.FedAR, server.FedVARP, server.FedLaAvg)
SAMPLERS = {cfg.Uniform: UniformSampler, cfg.AllAvailable: AllAvailableSampler,
            cfg.Md: MdSampler, cfg.PowerOfChoice: PowerOfChoiceSampler, cfg.FedGS: FedGSSampler,
            cfg.LongestAbsent: LongestAbsentSampler, WaitGroup: WaitGroupSampler}


def build_aggregator(config: cfg.Aggregator, local_lr: float,
                     clients_per_round: int | None = None,
                     lr_schedule: server.LrSchedule = server.ConstantLr()):
    """The aggregator for ``config``; ``local_lr`` (task.lr) converts deltas to normalised
    updates; ``clients_per_round`` is the group size S of ``fedavg_s`` variant ``"wait"``;
    ``lr_schedule`` (``server.lr_schedule``) scales eta_l round by round in the server step
    of the aggregators that use it (the others see the scale only through the deltas)."""
    if isinstance(config, server.FedAvgS) and config.variant == "wait":
        if clients_per_round is None:
            raise ValueError("fedavg_s variant 'wait' needs the group size clients_per_round")
        return FedAvgWait(config, local_lr, clients_per_round)
    if isinstance(config, SCHEDULED):
        return AGGREGATORS[type(config)](config, local_lr, lr_schedule)
    return AGGREGATORS[type(config)](config, local_lr)


def build_sampler(config: cfg.Sampler, probe: ClientProbe | None = None,
                  rngs: RngTree | None = None, clients_per_round: int | None = None):
    """The sampler for ``config``; ``probe`` lets samplers that query clients do so;
    ``wait_group`` draws its groups of ``clients_per_round`` from ``rngs``."""
    if isinstance(config, WaitGroup):
        if rngs is None or clients_per_round is None:
            raise ValueError("wait_group needs the run's RngTree and the group size "
                             "clients_per_round to draw its groups")
        return WaitGroupSampler(config, rngs, clients_per_round)
    return SAMPLERS[type(config)](config, probe)
