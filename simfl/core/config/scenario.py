"""The scenario tree's root and command-line overrides.

Scenario scripts are found and built in :mod:`simfl.core.config.scripts`.
"""

from __future__ import annotations

import json
import re
import typing
from dataclasses import dataclass
from typing import Any

from simfl.core.config.aircomp import check_aircomp
from simfl.core.config.hierarchy import check_hierarchy
from simfl.core.config.mac import kinds_that
from simfl.core.config.network import Network
from simfl.core.config.node import Choice, Node, at_most, field_types, non_negative, require
from simfl.core.config.population import Population
from simfl.core.config.run import Run
from simfl.core.config.server import Server
from simfl.core.config.task import Task
from simfl.core.errors import ConfigError


#: the longest scenario name (it names the run folder, NAME_seedN)
MAX_NAME_CHARS = 100
#: a name is one plain file name: letters, digits and ``_ - . + = , @``, no leading dot
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+=,@-]*")
#: the largest root seed (numpy's seed sequences take any size; 2**63 - 1 keeps it int64)
MAX_SEED = 2**63 - 1
#: the longest ``--set`` value read (a JSON text); longer ones are refused unparsed
MAX_OVERRIDE_CHARS = 100_000


@dataclass(frozen=True)
class Scenario(Node):
    """A complete, validated description of one simulated FL deployment.

    ``name`` names the default run folder ``runs/NAME_seedN``: 1 to 100 letters, digits
    or ``_ - . + = , @``, not starting with a dot and without ``..`` (no path
    separators; choose another folder with ``simfl run --out``).
    """

    name: str = "scenario"
    seed: int = 0
    task: Task = Task()
    population: Population = Population()
    network: Network = Network()
    server: Server = Server()
    run: Run = Run()

    def validate(self) -> None:
        require(len(self.name) <= MAX_NAME_CHARS and _NAME.fullmatch(self.name) is not None
                and ".." not in self.name, "name", self.name,
                f"1 to {MAX_NAME_CHARS} letters, digits or _ - . + = , @, not starting with a "
                "dot and without '..' or path separators (choose a folder with --out)")
        non_negative(self, "seed")
        at_most(self, MAX_SEED, "seed")
        dataset = self.task.dataset
        if dataset.loss != "cross_entropy":  # targets, not class labels (``quadratic``)
            availability = self.population.availability
            key = "strategy" if hasattr(availability, "strategy") else "kind"  # diurnal's
            require(not availability.needs_labels, f"population.availability.{key}",
                    getattr(availability, key), "a model that does not use labels with "
                    f"task.dataset = {dataset.kind!r} (a label-based model needs a "
                    "classification data set)")
            sampler = self.server.sampler
            feature = getattr(sampler, "feature", None)
            require(feature not in ("oracle", "optimum"), "server.sampler.feature",
                    feature, f"'logit' or 'update' with task.dataset = {dataset.kind!r} (label "
                    "histograms and softmax optima need a classification data set)")
        optimizer = self.task.optimizer
        require(self.server.algorithm.local_rule != "scaffold" or optimizer.plain,
                "task.optimizer.kind", optimizer.kind, "plain sgd (no momentum, constant step) "
                "with SCAFFOLD (its control update (w_t - y) / (K lr) assumes plain SGD steps)")
        if self.server.algorithm.wants_late:  # FedAR late_policy = "store"
            mac = self.network.mac
            require(mac.capabilities.late_updates, "network.mac.kind", mac.kind,
                    f"{kinds_that('late_updates')} with server.algorithm.late_policy = "
                    "'store' (a shared MAC schedules uplinks round by round; a late upload "
                    "belongs to no round)")
            require(self.population.sessions is None, "population.sessions",
                    "a sessions table", "none with server.algorithm.late_policy = 'store' (a "
                    "session restarts the model; a late update from the last one has no place)")
        has_radio, placed = self.network.radio is not None, self.population.placement is not None
        require(has_radio or not placed, "network.radio", None, "a radio table when "
                "population.placement is set (positions feed the shared radio)")
        for name in self.network.mac.capabilities.needs_positions:
            value = getattr(self.network.mac, name)
            require(placed or value is None, f"network.mac.{name}", value,
                    "null unless population.placement is set (it needs the clients' positions)")
        require(placed or not has_radio, "population.placement", None, "a placement ("
                "disc, ppp, grid or file) when network.radio is set (the radio needs positions)")
        require(has_radio or self.population.mobility.kind == "static",
                "population.mobility.kind", self.population.mobility.kind,
                "static unless network.radio and population.placement are set")
        require(has_radio or not self.run.mobility_csv, "run.mobility_csv",
                self.run.mobility_csv, "false unless network.radio is set (positions)")
        amplifier = self.population.energy.amplifier
        require(has_radio or amplifier is None, "population.energy.amplifier",
                None if amplifier is None else amplifier.to_dict(), "null unless network.radio "
                "is set (the amplifier's draw follows the radio's transmit power)")
        check_aircomp(self)
        policy = self.server.policy
        require(not policy.needs_band or self.network.mac.kind == "ofdma", "server.policy.kind",
                policy.kind, f"a policy that gives no band shares unless network.mac.kind = "
                f"ofdma (it is {self.network.mac.kind!r})")
        mode = self.server.mode.kind
        if mode != "sync":  # async, buffered: no rounds
            mac = self.network.mac
            require(mac.capabilities.async_modes, "network.mac.kind", mac.kind,
                    f"{kinds_that('async_modes')} with server.mode = {mode!r} (the others "
                    "schedule their uplinks round by round)")
            require(self.population.sessions is None, "population.sessions",
                    "a sessions table", f"none with server.mode = {mode!r} (a session "
                    "restarts the model in rounds)")
            require(self.run.checkpoint_every_rounds is None, "run.checkpoint_every_rounds",
                    self.run.checkpoint_every_rounds, f"null with server.mode = {mode!r} "
                    "(checkpoints are taken between the rounds of sync mode)")
        check_hierarchy(self)


def parse_override(text: str) -> tuple[str, Any]:
    """Split ``KEY=VALUE``; the value is JSON when it parses, else a plain string."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError("--set", text, "KEY=VALUE with a dotted KEY such as server.deadline_s=30")
    key = key.strip()
    if len(raw) > MAX_OVERRIDE_CHARS:
        raise ConfigError(key, raw, f"a value of at most {MAX_OVERRIDE_CHARS:,} characters")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    except RecursionError:
        raise ConfigError(key, raw, "a JSON value nested a few levels deep") from None
    except ValueError:  # an integer with more digits than Python converts
        raise ConfigError(key, raw, "a number of sensible size (at most 19 digits for an "
                          "integer)") from None
    return key, value


def apply_overrides(scenario: Scenario, overrides: list[tuple[str, Any]]) -> Scenario:
    """Return a new scenario with each dotted ``key = value`` applied.

    The overrides are applied to the scenario's plain form and validated together at
    the end, so their order does not matter for rules that involve several fields.
    Shallower keys are applied before deeper ones (``X.kind`` counts as ``X``), so
    ``--set a.b=1 --set a=K`` means the same as the other order. Setting ``...kind`` to
    another kind switches an extension point to that kind's own defaults; only values
    given on the command line below it are kept. Defaults that a node derives from
    other fields (a variant's ``beta``) are derived afresh. Setting one field of an
    exclusive group (``task.local_steps``) clears the others (``task.local_epochs``).
    """
    tree = scenario.explicit_dict()
    for key, value in sorted(overrides, key=lambda item: _depth(item[0])):
        parts = key.split(".")
        cls: type[Node] = Scenario
        table = tree
        for depth, part in enumerate(parts[:-1]):
            sub = _node_type(cls, part)
            if sub is None:
                raise ConfigError(".".join(parts[:depth + 1]), value, _keys_at(cls, parts[:depth]))
            if isinstance(table.get(part), str):
                table[part] = {"kind": table[part]}
            elif not isinstance(table.get(part), dict):  # reset by a switch, or left null
                table[part] = _default_table(cls, part)
            table = table[part]
            cls = _kind_class(sub, table, parts[:depth + 1]) if issubclass(sub, Choice) else sub
        last = parts[-1]
        if last == "kind" and issubclass(cls, Choice):
            _kind_class(cls, {"kind": value}, parts[:-1])  # an unknown kind: say so here
            if table.get("kind") != value:  # a switch: the new kind's own defaults
                table.clear()
                table["kind"] = value
        elif last in cls.field_names():
            table[last] = value
            for group in cls.exclusive:
                if last in group and value is not None:
                    table.update({other: None for other in group if other != last})
        else:
            raise ConfigError(key, value, _keys_at(cls, parts[:-1]))
    return Scenario.from_dict(tree)  # type: ignore[return-value]


def _default_table(cls: type[Node], name: str) -> dict[str, Any]:
    """The plain form of field ``name``'s default section (empty if it has none)."""
    default = cls.__dataclass_fields__[name].default
    return default.explicit_dict() if isinstance(default, Node) else {}


def _depth(key: str) -> int:
    """How deep ``key`` reaches into the tree; ``X.kind`` replaces X itself."""
    parts = key.split(".")
    return len(parts) - 1 if parts[-1] == "kind" else len(parts)


def _node_type(cls: type[Node], name: str) -> type[Node] | None:
    """The node class of field ``name`` of ``cls``, or None if it is not a section."""
    if name not in cls.field_names():
        return None
    hint = field_types(cls)[name]
    options = [a for a in typing.get_args(hint) if a is not type(None)]  # unwrap ``X | None``
    if len(options) == 1:
        hint = options[0]
    return hint if isinstance(hint, type) and issubclass(hint, Node) else None


def _kind_class(base: type[Choice], table: dict[str, Any], path: list[str]) -> type[Choice]:
    try:
        chosen: type[Choice] = base._registry.get(table.get("kind"))
        return chosen
    except ConfigError as err:
        raise err.within(".".join(path)) from None


def _keys_at(cls: type[Node], prefix: list[str]) -> str:
    dotted = ".".join(prefix)
    names = [f"{dotted}.{n}" if dotted else n for n in cls.field_names()]
    if issubclass(cls, Choice):
        names.insert(0, f"{dotted}.kind" if dotted else "kind")
    return "a known key: " + ", ".join(names)
