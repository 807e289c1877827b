"""Aggregation rules and client samplers, built from their configs."""

from __future__ import annotations

from simfl.algorithms.fedavg import FedAvg
from simfl.algorithms.samplers import AllAvailableSampler, UniformSampler
from simfl.core import config as cfg

AGGREGATORS = {cfg.FedAvg: FedAvg}
SAMPLERS = {cfg.Uniform: UniformSampler, cfg.AllAvailable: AllAvailableSampler}


def build_aggregator(config: cfg.Aggregator, local_lr: float):
    """The aggregator for ``config``; ``local_lr`` (task.lr) converts deltas to normalised updates."""
    return AGGREGATORS[type(config)](config, local_lr)


def build_sampler(config: cfg.Sampler):
    return SAMPLERS[type(config)](config)
