"""OFDMA schedulers: how a cell's band is split among its active uploads.

``network.mac.scheduler`` (a field of the ``ofdma`` MAC) names one of these kinds. A
scheduler has no settings of its own (the MAC's ``resource_blocks`` and
``pf_time_constant_s`` are shared by all); its config class only registers the name,
and its implementation (a band split, :mod:`simfl.sim.mac.band_split`) is named with
:func:`simfl.core.registry.implements`, or :func:`simfl.register` for a plug-in.
"""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.node import Choice
from simfl.core.errors import ConfigError


@dataclass(frozen=True)
class Scheduler(Choice, point="schedulers"):
    """An OFDMA scheduler (``network.mac.scheduler`` names one)."""


@dataclass(frozen=True)
class EqualShare(Scheduler):
    """Processor sharing: 1/n of the band to each active upload.

    With resource blocks: whole blocks by the largest remainder, ties to the lower id."""

    kind = "equal"


@dataclass(frozen=True)
class RoundRobin(Scheduler):
    """Whole resource blocks dealt to the uploads in turn: equal time shares."""

    kind = "round_robin"


@dataclass(frozen=True)
class ProportionalFair(Scheduler):
    """Shares in proportion to full-band rate over averaged throughput."""

    kind = "proportional_fair"
    paper = "Tse, Viswanath, Fundamentals of Wireless Communication, 2005, sec. 6.7"


@dataclass(frozen=True)
class MaxRate(Scheduler):
    """The whole band to the active client with the highest full-band rate."""

    kind = "max_rate"


@dataclass(frozen=True)
class MinLatency(Scheduler):
    """A split fixed when the round opens under which the round's clients finish together."""

    kind = "min_latency"
    paper = ("Shi et al., Joint device scheduling and resource allocation for latency "
             "constrained wireless federated learning, IEEE TWC 20(1), 2021")


def scheduler_named(name: str) -> type[Scheduler]:
    """The config class of the scheduler ``name`` (a ConfigError names the field
    ``scheduler``, which the sections it travels through prefix with ``network.mac``)."""
    registry = Scheduler._registry
    if name not in registry:
        raise ConfigError("scheduler", name,
                          f"one of the schedulers: {', '.join(registry.names())}")
    found: type[Scheduler] = registry.get(name)
    return found
