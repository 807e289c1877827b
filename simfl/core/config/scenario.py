"""The scenario tree's root, command-line overrides and loading scenario scripts."""

from __future__ import annotations

import importlib.util
import json
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simfl.core.config.network import Network
from simfl.core.config.node import Choice, Node, field_types, non_negative, require
from simfl.core.config.population import Population
from simfl.core.config.run import Run
from simfl.core.config.server import Server
from simfl.core.config.task import Task
from simfl.core.errors import ConfigError, SimflError


@dataclass(frozen=True)
class Scenario(Node):
    """A complete, validated description of one simulated FL deployment."""

    name: str = "scenario"
    seed: int = 0
    task: Task = Task()
    population: Population = Population()
    network: Network = Network()
    server: Server = Server()
    run: Run = Run()

    def validate(self) -> None:
        non_negative(self, "seed")
        dataset = self.task.dataset
        if dataset.loss != "cross_entropy":  # targets, not class labels (``quadratic``)
            availability = self.population.availability
            key = "strategy" if hasattr(availability, "strategy") else "kind"  # diurnal's
            require(not availability.needs_labels, f"population.availability.{key}",
                    getattr(availability, key), "a model that does not use labels with "
                    f"task.dataset = {dataset.kind!r} (a label-based model needs a "
                    "classification data set)")
            sampler = self.server.sampler
            require(getattr(sampler, "feature", None) != "oracle", "server.sampler.feature",
                    "oracle", f"'logit' or 'update' with task.dataset = {dataset.kind!r} (label "
                    "histograms need a classification data set)")
        if self.server.algorithm.wants_late:  # FedAR late_policy = "store"
            require(self.network.mac.kind == "ideal", "network.mac.kind", self.network.mac.kind,
                    "ideal with server.algorithm.late_policy = 'store' (a shared MAC "
                    "schedules uplinks round by round; a late upload belongs to no round)")
            require(self.population.sessions is None, "population.sessions",
                    "a sessions table", "none with server.algorithm.late_policy = 'store' (a "
                    "session restarts the model; a late update from the last one has no place)")


def parse_override(text: str) -> tuple[str, Any]:
    """Split ``KEY=VALUE``; the value is JSON when it parses, else a plain string."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise ConfigError("--set", text, "KEY=VALUE with a dotted KEY such as server.deadline_s=30")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.strip(), value


def apply_overrides(scenario: Scenario, overrides: list[tuple[str, Any]]) -> Scenario:
    """Return a new scenario with each dotted ``key = value`` applied in order.

    The overrides are applied to the scenario's plain form and validated together at
    the end, so their order does not matter for rules that involve several fields.
    Setting ``...kind`` switches an extension point to another kind and keeps the fields
    the new kind shares with the old one. Setting one field of an exclusive group
    (``task.local_steps``) clears the others (``task.local_epochs``).
    """
    tree = scenario.to_dict()
    for key, value in overrides:
        parts = key.split(".")
        cls: type[Node] = Scenario
        table = tree
        for depth, part in enumerate(parts[:-1]):
            sub = _node_type(cls, part)
            if sub is None:
                raise ConfigError(".".join(parts[:depth + 1]), value, _keys_at(cls, parts[:depth]))
            if isinstance(table.get(part), str):
                table[part] = {"kind": table[part]}
            elif table.get(part) is None:  # an optional section left null: its defaults
                table[part] = {}
            table = table[part]
            cls = _kind_class(sub, table, parts[:depth + 1]) if issubclass(sub, Choice) else sub
        last = parts[-1]
        if last == "kind" and issubclass(cls, Choice):
            new_cls = _kind_class(cls, {"kind": value}, parts[:-1])
            keep = {k: v for k, v in table.items() if k in new_cls.field_names()}
            table.clear()
            table.update(kind=value, **keep)
        elif last in cls.field_names():
            table[last] = value
            for group in cls.exclusive:
                if last in group and value is not None:
                    table.update({other: None for other in group if other != last})
        else:
            raise ConfigError(key, value, _keys_at(cls, parts[:-1]))
    return Scenario.from_dict(tree)


def _node_type(cls: type[Node], name: str) -> type[Node] | None:
    """The node class of field ``name`` of ``cls``, or None if it is not a section."""
    if name not in cls.field_names():
        return None
    hint = field_types(cls)[name]
    options = [a for a in typing.get_args(hint) if a is not type(None)]  # unwrap ``X | None``
    if len(options) == 1:
        hint = options[0]
    return hint if isinstance(hint, type) and issubclass(hint, Node) else None


def _kind_class(base: type[Choice], table: dict, path: list[str]) -> type[Choice]:
    try:
        return base._registry.get(table.get("kind"))
    except ConfigError as err:
        raise err.within(".".join(path)) from None


def _keys_at(cls: type[Node], prefix: list[str]) -> str:
    dotted = ".".join(prefix)
    names = [f"{dotted}.{n}" if dotted else n for n in cls.field_names()]
    if issubclass(cls, Choice):
        names.insert(0, f"{dotted}.kind" if dotted else "kind")
    return "a known key: " + ", ".join(names)


def scenario_search_dirs() -> list[Path]:
    """Where a scenario given by name is looked for: ./scenarios, then simfl's own."""
    return [Path.cwd() / "scenarios", Path(__file__).resolve().parents[3] / "scenarios"]


def resolve_scenario_path(name_or_path: str) -> Path:
    path = Path(name_or_path)
    if path.is_file():
        return path
    stem = path.name[:-3] if path.name.endswith(".py") else path.name
    for folder in scenario_search_dirs():
        candidate = folder / f"{stem}.py"
        if candidate.is_file():
            return candidate
    known = sorted({p.stem for d in scenario_search_dirs() if d.is_dir() for p in d.glob("*.py")
                    if not p.stem.startswith("_")})
    raise SimflError(f"scenario {name_or_path!r} not found: give a path to a scenario script "
                     f"or one of the names {', '.join(known) or '(none found)'}.")


def load_scenario(name_or_path: str) -> Scenario:
    """Import a scenario script and call its ``scenario()`` function."""
    path = resolve_scenario_path(name_or_path)
    spec = importlib.util.spec_from_file_location(f"simfl_scenario_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    make = getattr(module, "scenario", None)
    if not callable(make):
        raise SimflError(f"{path} defines no scenario() function returning a simfl.Scenario.")
    result = make()
    if not isinstance(result, Scenario):
        raise SimflError(f"{path}: scenario() returned {type(result).__name__}, not a simfl.Scenario.")
    return result
