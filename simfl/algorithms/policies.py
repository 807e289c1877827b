"""The built-in round policies (``server.policy``): importing this module names their
implementations (:func:`simfl.core.registry.implements`)."""

from __future__ import annotations

from simfl.algorithms.fedcs import FedCSPolicy
from simfl.algorithms.min_energy import MinEnergyPolicy

__all__ = ["FedCSPolicy", "MinEnergyPolicy"]
