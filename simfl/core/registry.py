"""Named registries, one per extension point (aggregators, samplers, channels, ...),
and the one table that gives each kind's config class its implementation.

A registry maps a lower_snake_case name to the frozen config class of one
implementation; ``simfl list`` reads only these registries, so it never imports torch.
The implementing layers (``sim``, ``train``, ``algorithms``) name their implementations
with :func:`implements` and builders find them with :func:`implementation_of`; an
implementation may be given as ``"package.module:attribute"``, imported on first use, so
that naming a torch-backed kind does not import torch. Kinds defined outside simfl
(plug-ins, see :mod:`simfl.plugins`) register both halves the same way and are marked
``plugin``.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Any, Callable, Generic, Iterator, TypeVar

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


#: each kind's config class -> its implementation (or "module:attribute" until first use)
_IMPLEMENTATIONS: dict[type, Any] = {}
#: the config classes whose implementation a plug-in gave (``simfl.register``)
_PLUGGED: set[type] = set()


def implements(config: type, implementation: Any = None, *, plugged: bool = False) -> Any:
    """Name the implementation of the kind whose config class is ``config``.

    ``implements(Config, impl)`` or, as a decorator, ``@implements(Config)`` on the
    implementation (which it returns unchanged). ``impl`` may be the string
    ``"package.module:attribute"``, imported when the kind is first built. Naming an
    implementation again replaces the earlier one (a scenario script loaded twice), except
    that a plug-in's (``plugged``, :func:`simfl.register`) is never replaced by a built-in
    one: a script may swap a built-in kind's implementation before simfl's module that
    names the built-in is imported.
    """
    if implementation is None:
        def decorate(impl: T) -> T:
            implements(config, impl, plugged=plugged)
            return impl
        return decorate
    if not isinstance(config, type):
        raise TypeError(f"{config!r} is not a config class")
    if plugged:
        _PLUGGED.add(config)
    elif config in _PLUGGED:
        return implementation
    _IMPLEMENTATIONS[config] = implementation
    return implementation


def is_plugged(config: object) -> bool:
    """Whether a plug-in gave the implementation :func:`implementation_of` finds."""
    cls = config if isinstance(config, type) else type(config)
    return next((klass in _PLUGGED for klass in cls.__mro__ if klass in _IMPLEMENTATIONS),
                False)


def implementation_of(config: object, field: str = "kind") -> Any:
    """The implementation of ``config`` (a config instance or class): the nearest class in
    its MRO that has one. A kind without one is a :class:`ConfigError` on ``field``."""
    cls = config if isinstance(config, type) else type(config)
    for klass in cls.__mro__:
        if klass in _IMPLEMENTATIONS:
            found = _IMPLEMENTATIONS[klass]
            if isinstance(found, str):
                module, _, attribute = found.partition(":")
                found = getattr(importlib.import_module(module), attribute)
                _IMPLEMENTATIONS[klass] = found
            return found
    raise ConfigError(field, getattr(cls, "kind", cls.__name__),
                      "a kind with an implementation: register one with "
                      f"simfl.register({cls.__name__}, implementation)")


def has_implementation(config: object) -> bool:
    """Whether :func:`implementation_of` would find one (without importing it)."""
    cls = config if isinstance(config, type) else type(config)
    return any(klass in _IMPLEMENTATIONS for klass in cls.__mro__)


def implemented_by(implementation: Callable[..., Any] | type) -> list[type]:
    """The config classes whose implementation is ``implementation`` (already imported)."""
    return [cls for cls, impl in _IMPLEMENTATIONS.items() if impl is implementation]
