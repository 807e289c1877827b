"""Frozen, validated configuration nodes: the building blocks of the scenario tree.

Every section of a scenario is a frozen dataclass deriving from :class:`Node`. On
construction each field is coerced to its annotated type (a dict becomes a nested node,
a string names a registered kind, an int is accepted where a float is expected) and the
node's :meth:`Node.validate` runs. Errors are :class:`ConfigError` carrying the dotted
field path, the bad value and what is allowed.

:class:`Choice` nodes are the extension points: a base class declares a registry
(``class Channel(Choice, point="channels")``) and each concrete config class with a
``kind`` class attribute registers itself there.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any, ClassVar, Literal

from simfl.core.errors import ConfigError
from simfl.core.registry import Registry, registry

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
        hints = field_types(type(self))
        object.__setattr__(self, "_derived", frozenset())
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            try:
                coerced = _coerce(hints[f.name], value, f.name in self.infinite_ok)
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
            raise ConfigError(unknown[0], data[unknown[0]], _field_list(cls))
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


def _field_list(cls: type[Node]) -> str:
    return "one of the fields " + ", ".join(cls.field_names())


def _plain(value: Any, explicit: bool = False) -> Any:
    if isinstance(value, Node):
        return value.explicit_dict() if explicit else value.to_dict()
    if isinstance(value, tuple):
        return [_plain(v, explicit) for v in value]
    return value


def _describe(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in typing.get_args(tp))
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(tp))
    if origin is tuple:
        return f"a list of {_describe(typing.get_args(tp)[0])}"
    if tp is type(None):
        return "null"
    if isinstance(tp, type) and issubclass(tp, Choice):
        return f"one of the {tp._registry.point}: {', '.join(tp._registry.names())}"
    if isinstance(tp, type) and issubclass(tp, Node):
        return f"a table with {_field_list(tp)}"
    return {float: "a number", int: "an integer", bool: "true or false", str: "a string"}.get(
        tp, str(tp))


def _coerce(tp: Any, value: Any, infinite_ok: bool = False) -> Any:
    """``value`` as type ``tp``; a float must be finite unless ``infinite_ok``."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(tp)
        if value is None and type(None) in options:
            return None
        last: ConfigError | None = None
        for option in options:
            if option is type(None):
                continue
            try:
                return _coerce(option, value, infinite_ok)
            except ConfigError as err:
                last = err
        if len(options) == 2 and last is not None:
            raise last
        raise ConfigError("", value, _describe(tp))
    if origin is Literal:
        if value not in typing.get_args(tp):
            raise ConfigError("", value, _describe(tp))
        return value
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError("", value, _describe(tp))
        item = typing.get_args(tp)[0]
        out = []
        for i, v in enumerate(value):
            try:
                out.append(_coerce(item, v, infinite_ok))
            except ConfigError as err:
                raise err.within(f"[{i}]") from None
        return tuple(out)
    if isinstance(tp, type) and issubclass(tp, Choice):
        return tp.resolve(value)
    if isinstance(tp, type) and issubclass(tp, Node):
        if isinstance(value, tp):
            return value
        if isinstance(value, dict):
            return tp.from_dict(value)
        raise ConfigError("", value, _describe(tp))
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError("", value, "true or false")
        return value
    if tp is int:
        if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_INT:
            value = int(value)
        too_big = isinstance(value, float) and math.isfinite(value) and value.is_integer()
        if isinstance(value, bool) or not isinstance(value, int) and not too_big:
            raise ConfigError("", value, "an integer")
        if abs(value) > MAX_INT:
            raise ConfigError("", value, f"an integer of at most {MAX_INT} in size (int64)")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError("", value, "a number")
        try:
            number = float(value)
        except OverflowError:  # an int beyond the float range
            raise ConfigError("", value, "a finite number") from None
        if math.isnan(number) or (math.isinf(number) and not infinite_ok):
            raise ConfigError("", value, "a number (not NaN)" if infinite_ok
                              else "a finite number")
        return number
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError("", value, "a string")
        return value
    raise TypeError(f"unsupported field type {tp!r}")


# ---------------------------------------------------------------------------------
# validation helpers used by the sections' ``validate`` methods


def require(ok: bool, field: str, value: object, allowed: str) -> None:
    """Raise a ConfigError for ``field`` unless ``ok``."""
    if not ok:
        raise ConfigError(field, value, allowed)


def at_most(node: Node, limit: float, *names: str) -> None:
    """Each of ``names`` (when set) is at most ``limit``: keeps counts and sizes sane."""
    for name in names:
        value = getattr(node, name)
        if value is not None:
            require(value <= limit, name, value, f"a number <= {limit:g}")


def positive(node: Node, *names: str) -> None:
    for name in names:
        value = getattr(node, name)
        if value is not None:
            require(value > 0, name, value, "a number > 0")


def non_negative(node: Node, *names: str) -> None:
    for name in names:
        value = getattr(node, name)
        if value is not None:
            require(value >= 0, name, value, "a number >= 0")


def probability(node: Node, *names: str) -> None:
    for name in names:
        value = getattr(node, name)
        values = value if isinstance(value, tuple) else (value,)
        for v in values:
            if v is not None:
                require(0.0 <= v <= 1.0, name, value, "a probability in [0, 1]")
