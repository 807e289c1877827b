"""Bring your own kind of any extension point: an aggregator, sampler, local rule, server
optimiser, codec, data set, partition, model, channel, fading law, path loss, power
control, placement, mobility, availability model, MAC, OFDMA scheduler or round policy.

A kind has two halves. Its **config class** is a frozen dataclass that subclasses the
extension point's public base (:class:`simfl.Aggregator`, :class:`simfl.Mac`,
:class:`simfl.Channel`, ..., or :class:`simfl.LocalPayload` for a local rule) with a
``kind`` class attribute: defining it registers the name, so scenarios, ``--set``
overrides and ``simfl list`` know it. Its **implementation** is handed over with
:func:`register`, which names it in the one table of :mod:`simfl.core.registry` that
every builder reads::

    @dataclass(frozen=True)
    class Median(simfl.Aggregator):
        \"\"\"Coordinate-wise median of the received updates.\"\"\"
        kind = "median"

    @simfl.register(Median)
    class MedianAggregator: ...

What each point's implementation is called with, and what it returns (``cfg`` is the
kind's config; a class is called like a function):

=================  ==============================================================
aggregators        ``cls(cfg, local_lr)``: ``init``, ``client_payload``,
                   ``aggregate`` (:class:`simfl.core.protocols.Aggregator`)
samplers           ``cls(cfg, probe)``: ``init``, ``select``, ``observe``
                   (:class:`simfl.core.protocols.Sampler`)
local_rules        a :class:`simfl.LocalRule` subclass or instance (its hooks)
server_optimizers  ``build(cfg)``: a
                   :class:`simfl.algorithms.server_optimizers.Transform`, or None
                   for the identity
compressions       ``build(cfg)``: a :class:`simfl.algorithms.compression.Codec`
                   (``encode``/``decode``); the config's ``bits(sizes)`` counts
datasets           ``load(cfg, n_clients, rngs)``:
                   :class:`simfl.train.datasets.Samples`
partitions         ``split(cfg, y, groups, n_clients, rng)``: each client's
                   indices (or a :class:`simfl.train.partition.Splitter`)
models             ``build(cfg, input_shape, n_classes)``: ``init(generator)``,
                   ``forward(params, x)``, ``param_shapes()``
channels           ``impl(cfg, rngs)``: a :class:`simfl.Link` subclass
fading             ``impl(cfg, direction, rngs, n_clients)``: ``gain(client, t_s)``
path_loss          ``impl(cfg, d_m)``: the loss in dB at each distance (by
                   default the config's own ``loss_db``)
power_control      ``impl(cfg, radio, gain_db, max_dbm)``: each client's power
                   (dBm; ``-inf`` silences)
placements         ``impl(cfg, n_clients, rng)`` (``impl(cfg, n_clients, rng, cells)`` when
                   the function has ``by_cell = True``): the arrays ``(x_m, y_m)``
mobility           ``impl(cfg, radio_map, propagation, rngs, record)``: a mover
                   (``advance(t_s)``)
availability       ``impl(cfg, n_clients, rngs, n_samples, label_counts)``:
                   ``online(round, t_s)``, ``offline_at(clients)``
macs               ``cls(cfg, env, rngs, n_clients, on_transmit)``: a MAC
                   (``transmit(client, uplink)``, ``leave``; subclass
                   :class:`simfl.MacBase`)
schedulers         ``cls(mac_cfg, radio_map, n_clients)``: a subclass of
                   :class:`simfl.BandSplit` (override
                   ``fractions``); ``network.mac.scheduler`` names it
policies           ``cls(cfg)``: ``decide(state)`` returning a
                   :class:`simfl.Allocation` (``server.policy`` names it)
=================  ==============================================================

The other points (rates, learning-rate and step-size schedules, local optimisers,
server modes, session initialisers) are implemented by their config classes' own
methods: a new kind defines them there and needs no :func:`register`.

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
from simfl.core.records import LocalPayload
from simfl.core.registry import implements

#: the entry-point group searched for plug-ins
GROUP = "simfl.plugins"

_loaded: list[str] | None = None  # the load errors, once the plug-ins were loaded


#: the points whose kinds are implemented by their config class's own methods
CONFIG_IMPLEMENTED = ("rates", "lr_schedules", "step_schedules", "local_optimizers",
                      "server_modes", "initialisers")


def point_of(config: type) -> str:
    """The extension point of a kind's config class (a subclass with a ``kind``)."""
    if isinstance(config, type) and "kind" in config.__dict__:
        if issubclass(config, LocalPayload):
            return "local_rules"
        if issubclass(config, Choice):
            return config._registry.point
    raise TypeError(f"{config!r} is not a kind's config class: subclass an extension point's "
                    "base (simfl.Aggregator, simfl.Mac, simfl.Channel, ..., "
                    "simfl.LocalPayload) and give it a kind")


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
    if point in CONFIG_IMPLEMENTED:
        raise TypeError(f"{point}: a kind is implemented by its config class's own methods "
                        f"(define them on {config.__name__}); there is nothing to register")
    stored = implementation
    if point == "local_rules" and isinstance(implementation, type):
        stored = implementation()  # a LocalRule class: its hooks hold no state
    implements(config, stored, plugged=True)
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
