"""Aggregation rules and client samplers, built from their configs.

Aggregators compute on torch tensors; their modules are imported when one is built, so
that a timing-only run (which builds none) never imports torch. Every aggregator's
metrics say how many updates it used and whether the model moved
(:mod:`simfl.algorithms.report`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simfl.algorithms.fedgs import FedGSSampler
from simfl.algorithms.power_of_choice import PowerOfChoiceSampler
from simfl.algorithms.samplers import (AllAvailableSampler, LongestAbsentSampler, MdSampler,
                                       UniformSampler, WaitGroupSampler)
from simfl.core import config as cfg
from simfl.core.config import server
from simfl.core.config.sampler import WaitGroup
from simfl.core.protocols import Aggregator, ClientProbe, Sampler
from simfl.core.registry import implementation_of, implements
from simfl.core.rng import RngTree

# each aggregator config's implementation, built as ``cls(config, local_lr)`` (a class of
# this package, imported when first built); plug-ins add theirs with ``simfl.register``
for _config, _path in ((cfg.FedAvg, "fedavg:FedAvg"), (server.FedAvgIS, "fedavg_is:FedAvgIS"),
                       (server.FedAvgS, "fedavg:FedAvg"),
                       (server.FedAvgSWait, "fedavg_s:FedAvgWait"), (server.Mifa, "mifa:Mifa"),
                       (server.FedAR, "fedar:FedAR"), (server.FedVARP, "fedvarp:FedVARP"),
                       (server.FedLaAvg, "fedlaavg:FedLaAvg"),
                       (server.Scaffold, "scaffold:Scaffold"),
                       (server.FedProx, "fedprox:FedProx"), (server.CVaR, "cvar:CVaR"),
                       (server.AirComp, "aircomp:AirComp")):
    implements(_config, f"{__name__}.{_path}")
#: the aggregators whose server step is eta_g * eta_l: they follow ``server.lr_schedule``
SCHEDULED = (server.Mifa, server.FedAR, server.FedVARP, server.FedLaAvg)
# each sampler config's implementation, built as ``cls(config, probe)`` (``wait_group``:
# ``cls(config, rngs, clients_per_round)``)
for _kind, _sampler in ((cfg.Uniform, UniformSampler), (cfg.AllAvailable, AllAvailableSampler),
                        (cfg.Md, MdSampler), (cfg.PowerOfChoice, PowerOfChoiceSampler),
                        (cfg.FedGS, FedGSSampler), (cfg.LongestAbsent, LongestAbsentSampler),
                        (WaitGroup, WaitGroupSampler)):
    implements(_kind, _sampler)


def build_aggregator(config: cfg.Aggregator, local_lr: float,
                     clients_per_round: int | None = None,
                     lr_schedule: server.LrSchedule = server.ConstantLr()) -> Aggregator:
    """The aggregator for ``config``; ``local_lr`` (task.lr) converts deltas to normalised
    updates; ``clients_per_round`` is the group size S of ``fedavg_s_wait``;
    ``lr_schedule`` (``server.lr_schedule``) scales eta_l round by round in the server step
    of the aggregators that use it (the others see the scale only through the deltas)."""
    aggregator = implementation_of(config, "server.algorithm.kind")
    built: Aggregator
    if isinstance(config, server.FedAvgSWait):
        if clients_per_round is None:
            raise ValueError("fedavg_s_wait needs the group size clients_per_round")
        built = aggregator(config, local_lr, clients_per_round)
    elif isinstance(config, SCHEDULED):
        built = aggregator(config, local_lr, lr_schedule)
    else:
        built = aggregator(config, local_lr)
    return built


def build_sampler(config: cfg.Sampler, probe: ClientProbe | None = None,
                  rngs: RngTree | None = None, clients_per_round: int | None = None) -> Sampler:
    """The sampler for ``config``; ``probe`` lets samplers that query clients do so;
    ``wait_group`` draws its groups of ``clients_per_round`` from ``rngs``."""
    sampler = implementation_of(config, "server.sampler.kind")
    if isinstance(config, WaitGroup):
        if rngs is None or clients_per_round is None:
            raise ValueError("wait_group needs the run's RngTree and the group size "
                             "clients_per_round to draw its groups")
        built: Sampler = sampler(config, rngs, clients_per_round)
        return built
    built = sampler(config, probe)
    return built


if TYPE_CHECKING:  # mypy checks every built-in aggregator against the Aggregator Protocol
    from simfl.algorithms.aircomp import AirComp
    from simfl.algorithms.cvar import CVaR
    from simfl.algorithms.fedar import FedAR
    from simfl.algorithms.fedavg import FedAvg
    from simfl.algorithms.fedavg_is import FedAvgIS
    from simfl.algorithms.fedavg_s import FedAvgWait
    from simfl.algorithms.fedlaavg import FedLaAvg
    from simfl.algorithms.fedprox import FedProx
    from simfl.algorithms.fedvarp import FedVARP
    from simfl.algorithms.mifa import Mifa
    from simfl.algorithms.scaffold import Scaffold

    _BUILT_IN: tuple[type[Aggregator], ...] = (AirComp, CVaR, FedAR, FedAvg, FedAvgIS,
                                               FedAvgWait, FedLaAvg, FedProx, FedVARP, Mifa,
                                               Scaffold)
