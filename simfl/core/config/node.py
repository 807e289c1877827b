"""Frozen, validated configuration nodes: the building blocks of the scenario tree.

Every section of a scenario is a frozen dataclass deriving from :class:`Node`. On
construction each field is coerced to its annotated type (a dict becomes a nested node,
a string names a registered kind, an int is accepted where a float is expected) and the
node's :meth:`Node.validate` runs. Errors are :class:`ConfigError` carrying the dotted
field path, the bad value and what is allowed.

:class:`Choice` nodes are the extension points: a base class declares a registry
(``class Channel(Choice, point="channels")``) and each concrete config class with a
``kind`` class attribute registers itself there.

Coercing a raw value to a field's type is :mod:`simfl.core.config.coercion`'s work. The
helpers that the sections' ``validate`` methods call (:func:`require`, :func:`positive`,
...) live in :mod:`simfl.core.config.checks` and are importable from here too.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, ClassVar

from simfl.core.config.checks import at_most, non_negative, positive, probability, require
from simfl.core.errors import ConfigError
from simfl.core.registry import Registry, registry

__all__ = ["MAX_CLIENTS", "MAX_INT", "Choice", "Node", "field_list", "field_types",
           "at_most", "non_negative", "positive", "probability", "require"]

_FIELD_TYPES: dict[type, dict[str, Any]] = {}

#: the largest integer a field accepts: numpy's int64 holds every count and seed
MAX_INT = 2**63 - 1
#: the most clients a population or a round may have (far beyond what fits in memory)
MAX_CLIENTS = 10**9


def field_types(cls: type) -> dict[str, Any]:
    if cls not in _FIELD_TYPES:
        _FIELD_TYPES[cls] = typing.get_type_hints(cls)
    return _FIELD_TYPES[cls]


@dataclasses.dataclass(frozen=True)
class Node:
    """A frozen section of the scenario tree with typed, validated fields."""

    #: groups of fields of which at most one may be set; ``apply_overrides`` clears the
    #: others of a group when one is set from the command line.
    exclusive: ClassVar[tuple[tuple[str, ...], ...]] = ()
    #: float fields for which infinity means something (an infinite rate: no airtime);
    #: every other float field must be finite
    infinite_ok: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        from simfl.core.config.coercion import coerce  # it builds nodes: it imports this module

        hints = field_types(type(self))
        object.__setattr__(self, "_derived", frozenset())
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            try:
                coerced = coerce(hints[f.name], value, f.name in self.infinite_ok)
            except ConfigError as err:
                raise err.within(f.name) from None
            except RecursionError:
                raise ConfigError(f.name, "(a deeply nested value)",
                                  "a value nested at most a few levels deep") from None
            if coerced is not value:
                object.__setattr__(self, f.name, coerced)
        self.validate()

    def validate(self) -> None:
        """Check cross-field rules; raise :class:`ConfigError` naming the field."""

    def _set_default(self, name: str, value: object) -> None:
        """Fill a derived default during validation (the node is otherwise frozen).

        The field is remembered as derived: :meth:`explicit_dict` leaves it out, so that
        changing what it derives from (a kind, a variant) derives it afresh.
        """
        object.__setattr__(self, name, value)
        object.__setattr__(self, "_derived", getattr(self, "_derived") | {name})

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Node":
        unknown = [k for k in data if k not in cls.field_names()]
        if unknown:
            raise ConfigError(unknown[0], data[unknown[0]], field_list(cls))
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready form (tuples become lists, nested nodes dicts)."""
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def explicit_dict(self) -> dict[str, Any]:
        """:meth:`to_dict` with every derived default (see :meth:`_set_default`) null."""
        derived: frozenset[str] = getattr(self, "_derived", frozenset())
        return {f.name: None if f.name in derived else _plain(getattr(self, f.name), True)
                for f in dataclasses.fields(self)}


class Choice(Node):
    """A node that is one of several registered kinds (an extension point).

    Subclass with ``point="..."`` to declare an extension point; subclass that with a
    ``kind`` class attribute to register an implementation's config. The first line of
    the docstring is its one-line description in ``simfl list``; ``paper`` cites it.
    """

    kind: ClassVar[str]
    paper: ClassVar[str] = ""
    _registry: ClassVar[Registry[Any]]

    def __init_subclass__(cls, point: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if point is not None:
            cls._registry = registry(point)
        elif "kind" in cls.__dict__:
            summary = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
            cls._registry.add(cls.kind, cls, summary, cls.paper)

    @classmethod
    def resolve(cls, value: object) -> "Choice":
        """Turn a kind name, a ``{"kind": ...}`` dict or an instance into a config."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            made: Choice = cls._registry.get(value)()
            return made
        if isinstance(value, dict):
            if "kind" not in value:
                raise ConfigError("kind", None, f"one of the {cls._registry.point}: "
                                  f"{', '.join(cls._registry.names())}")
            chosen = cls._registry.get(value["kind"])
            return chosen.from_dict(  # type: ignore[no-any-return]
                {k: v for k, v in value.items() if k != "kind"})
        raise ConfigError("", value, f"a name or table of one of the {cls._registry.point}: "
                          f"{', '.join(cls._registry.names())}")

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **super().to_dict()}

    def explicit_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **super().explicit_dict()}


def field_list(cls: type[Node]) -> str:
    return "one of the fields " + ", ".join(cls.field_names())


def _plain(value: Any, explicit: bool = False) -> Any:
    if isinstance(value, Node):
        return value.explicit_dict() if explicit else value.to_dict()
    if isinstance(value, tuple):
        return [_plain(v, explicit) for v in value]
    return value
