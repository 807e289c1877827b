"""The built-in round policies (``server.policy``): importing this module names their
implementations (:func:`simfl.core.registry.implements`)."""

from __future__ import annotations

from simfl.algorithms.fedcs import FedCSPolicy
from simfl.algorithms.min_energy import MinEnergyPolicy
from simfl.core.config.policy import NoPolicy
from simfl.core.registry import implements
from simfl.core.round_policy import Allocation, RoundState

__all__ = ["FedCSPolicy", "KeepCandidates", "MinEnergyPolicy"]


@implements(NoPolicy)
class KeepCandidates:
    """``none``: every candidate the sampler picked, no resources decided (a run with
    ``none`` never builds a policy; this is what one would decide)."""

    def __init__(self, cfg: NoPolicy) -> None:
        self.cfg = cfg

    def decide(self, state: RoundState) -> Allocation:
        return Allocation(selected=[int(c) for c in state.clients])
