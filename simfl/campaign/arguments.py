"""The arguments of :func:`~simfl.campaign.sweep` in either of their forms: the command
line's text (``"KEY=VALUE"``, ``"KEY=V1,V2"``, ``"1-5"``) or Python values (mappings,
ints, lists), each turned into the one form the grid expansion takes."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from simfl.campaign.grid import parse_grid, parse_seeds
from simfl.core.config import parse_override
from simfl.core.errors import ConfigError


def sweep_overrides(set: Iterable[str] | Mapping[str, Any] | None) -> list[tuple[str, Any]]:
    if set is None:
        return []
    if isinstance(set, Mapping):
        return list(set.items())
    return [parse_override(text) for text in set]


def sweep_grid(grid: Iterable[str] | Mapping[str, Iterable[Any]] | None) -> list[tuple[str, list[Any]]]:
    if grid is None:
        return []
    if isinstance(grid, Mapping):
        pairs = [(key, list(values)) for key, values in grid.items()]
        for key, values in pairs:
            if key == "seed" or not values:
                raise ConfigError("--grid", key, "a scenario key other than seed, with values")
        return pairs
    pairs = [parse_grid(text) for text in grid]
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ConfigError("--grid", ", ".join(keys), "each key once")
    return pairs


def sweep_seeds(seeds: str | int | Iterable[int] | None) -> list[int] | None:
    if seeds is None:
        return None
    if isinstance(seeds, str):
        return parse_seeds(seeds)
    if isinstance(seeds, int):
        return [seeds]
    return parse_seeds(",".join(str(int(s)) for s in seeds))
