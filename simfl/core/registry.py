"""Named registries, one per extension point (aggregators, samplers, channels, ...).

A registry maps a lower_snake_case name to the frozen config class of one
implementation. The implementing layer (``sim``, ``train``, ``algorithms``) keeps its
own map from config class to implementation; ``simfl list`` reads only these
registries, so it never imports torch. Kinds defined outside simfl (plug-ins, see
:mod:`simfl.plugins`) register here the same way and are marked ``plugin``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Generic, Iterator, TypeVar

from simfl.core.errors import ConfigError

T = TypeVar("T")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class Entry(Generic[T]):
    name: str
    obj: T
    summary: str
    paper: str

    @property
    def plugin(self) -> bool:
        """True when the kind is defined outside simfl (a scenario script or a plug-in)."""
        return getattr(self.obj, "__module__", "simfl").split(".")[0] != "simfl"


class Registry(Generic[T]):
    """Names of one extension point, in registration order."""

    def __init__(self, point: str) -> None:
        self.point = point
        self._entries: dict[str, Entry[T]] = {}

    def add(self, name: str, obj: T, summary: str = "", paper: str = "") -> None:
        if not _NAME.match(name):
            raise ValueError(f"registry name {name!r} is not lower_snake_case")
        if name in self._entries and not _same_definition(self._entries[name].obj, obj):
            raise ValueError(f"{self.point}: {name!r} is registered twice")
        self._entries[name] = Entry(name, obj, summary, paper)

    def get(self, name: object) -> T:
        """The object registered as ``name``; a ConfigError lists the valid names."""
        if not isinstance(name, str) or name not in self._entries:
            raise ConfigError("kind", name, f"one of the {self.point}: {', '.join(self.names())}")
        return self._entries[name].obj

    def names(self) -> list[str]:
        return list(self._entries)

    def __iter__(self) -> Iterator[Entry[T]]:
        return iter(self._entries.values())

    def __contains__(self, name: object) -> bool:
        return name in self._entries


def _same_definition(old: object, new: object) -> bool:
    """Whether ``new`` is ``old`` defined again by the same code (a scenario script loaded
    twice): the later definition then replaces the earlier one."""
    return (getattr(old, "__module__", None) == getattr(new, "__module__", 0)
            and getattr(old, "__qualname__", None) == getattr(new, "__qualname__", 0))


REGISTRIES: dict[str, Registry[Any]] = {}


def registry(point: str) -> Registry[Any]:
    """The registry of an extension point, created on first use."""
    if point not in REGISTRIES:
        REGISTRIES[point] = Registry(point)
    return REGISTRIES[point]
