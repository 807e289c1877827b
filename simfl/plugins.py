"""Bring your own aggregator, sampler, local rule, server optimiser, data set or model.

A kind has two halves. Its **config class** is a frozen dataclass that subclasses the
extension point's public base (:class:`simfl.Aggregator`, :class:`simfl.Sampler`,
:class:`simfl.Dataset`, :class:`simfl.Model`, :class:`simfl.ServerOptimizer`, or
:class:`simfl.LocalPayload` for a local rule) with a ``kind`` class attribute: defining it registers the name, so scenarios,
``--set`` overrides and ``simfl list`` know it. Its **implementation** is handed over
with :func:`register`::

    @dataclass(frozen=True)
    class Median(simfl.Aggregator):
        \"\"\"Coordinate-wise median of the received updates.\"\"\"
        kind = "median"

    @simfl.register(Median)
    class MedianAggregator: ...

What each point expects of the implementation:

==============  =================================================================
aggregators     a class built as ``cls(config, local_lr)`` with ``init``,
                ``client_payload`` and ``aggregate`` (:class:`simfl.core.protocols.Aggregator`)
samplers        a class built as ``cls(config, probe)`` with ``init``, ``select``,
                ``observe`` (:class:`simfl.core.protocols.Sampler`)
local_rules     a :class:`simfl.LocalRule` subclass or instance (its hooks)
server_         ``build(config)`` returning a
optimizers      :class:`simfl.algorithms.server_optimizers.Transform` (an
                ``init``/``update`` pair; compose with ``chain``), or None for
                the identity
datasets        ``load(config, n_clients, rngs)`` returning
                :class:`simfl.train.datasets.Samples`
models          ``build(config, input_shape, n_classes)`` returning an object with
                ``init(generator) -> {name: tensor}`` and ``forward(params, x)``
compressions    ``build(config)`` returning a
                :class:`simfl.algorithms.compression.Codec` (``encode``/``decode``);
                the config's ``bits(sizes)`` counts the payload
policies        a class built as ``cls(config)`` with ``decide(state) -> Allocation``
                (:class:`simfl.core.round_policy.RoundPolicy`; ``server.policy``)
schedulers      a class built as ``cls(config)`` with ``fractions(clients,
                full_rate_bps)`` (:class:`simfl.Scheduler`; ``network.mac.scheduler``)
==============  =================================================================

A separate package makes its kinds available to the ``simfl`` command with an entry
point in the group ``simfl.plugins``, naming a module (imported) or a function (called
with no arguments) that defines and registers them. ``simfl list``, ``validate`` and
``run`` load the plug-ins (:func:`load_plugins`) before they read the registries; a
plug-in that fails to load is reported in one line and skipped.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any, Callable

from simfl.core.config.node import Choice
from simfl.core.registry import implements
from simfl.core.records import LocalPayload

#: the entry-point group searched for plug-ins
GROUP = "simfl.plugins"

_loaded: list[str] | None = None  # the load errors, once the plug-ins were loaded


def _implementations(point: str) -> dict:
    """The implementing layer's map from config class to implementation."""
    if point in ("aggregators", "samplers"):
        from simfl import algorithms

        return algorithms.AGGREGATORS if point == "aggregators" else algorithms.SAMPLERS
    if point == "local_rules":
        from simfl.train.rules import RULES

        return RULES
    if point == "datasets":
        from simfl.train import datasets

        return getattr(datasets, "LOADERS", None) or datasets._LOADERS
    if point == "models":
        from simfl.train.models import BUILDERS

        return BUILDERS
    if point == "server_optimizers":
        from simfl.algorithms.server_optimizers import OPTIMIZERS

        return OPTIMIZERS
    if point == "compressions":
        from simfl.algorithms.compression import CODECS

        return CODECS
    raise ValueError(f"{point}: plug-ins can add aggregators, samplers, local_rules, datasets, "
                     "models, server_optimizers, compressions, policies or schedulers")


def point_of(config: type) -> str:
    """The extension point of a kind's config class (a subclass with a ``kind``)."""
    if isinstance(config, type) and "kind" in config.__dict__:
        if issubclass(config, LocalPayload):
            return "local_rules"
        if issubclass(config, Choice):
            return config._registry.point
    raise TypeError(f"{config!r} is not a kind's config class: subclass an extension point's "
                    "base (simfl.Aggregator, simfl.Sampler, simfl.Dataset, simfl.Model, "
                    "simfl.ServerOptimizer, simfl.LocalPayload) and give it a kind")


def register(config: type, implementation: Any = None) -> Any:
    """Give the kind whose config class is ``config`` its implementation.

    Used as ``register(Config, implementation)`` or as a decorator ``@register(Config)``
    on the implementation; returns the implementation. Registering the same kind again
    (a scenario script loaded twice) replaces the earlier one.
    """
    if implementation is None:
        def decorate(impl: Any) -> Any:
            return register(config, impl)
        return decorate
    point = point_of(config)
    if point in ("policies", "schedulers"):  # named in the one implementation table
        return implements(config, implementation)
    stored = implementation
    if point == "local_rules" and isinstance(implementation, type):
        stored = implementation()  # a LocalRule class: its hooks hold no state
    _implementations(point)[config] = stored
    return implementation


def load_plugins() -> list[str]:
    """Load every ``simfl.plugins`` entry point once; returns one line per failure."""
    global _loaded
    if _loaded is None:
        _loaded = []
        for entry in importlib.metadata.entry_points(group=GROUP):
            try:
                loaded = entry.load()
                if callable(loaded) and not isinstance(loaded, type):
                    loaded()
            except Exception as err:  # a broken plug-in must not stop the command
                reason = str(err).strip().splitlines()[0] if str(err).strip() else ""
                _loaded.append(f"plug-in {entry.name!r} ({entry.value}) was not loaded: "
                               f"{type(err).__name__}{': ' + reason if reason else ''}")
    return list(_loaded)


def warn_failed_plugins(command: str, write: Callable[[str], Any]) -> None:
    """Load the plug-ins and ``write`` one warning line for each that failed."""
    for line in load_plugins():
        write(f"simfl {command}: warning: {line}\n")
