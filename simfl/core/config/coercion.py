"""Coercing a raw field value (from TOML, JSON or the command line) to the field's type.

:class:`~simfl.core.config.node.Node` runs :func:`coerce` on every field when it is
built: a dict becomes a nested node, a string names a registered kind, an int is
accepted where a float is expected. :func:`describe` words a type for the error message
when a value does not fit.
"""

from __future__ import annotations

import math
import types
import typing
from typing import Any, Literal

from simfl.core.config.node import MAX_INT, Choice, Node, field_list
from simfl.core.errors import ConfigError


def describe(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(describe(a) for a in typing.get_args(tp))
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(tp))
    if origin is tuple:
        return f"a list of {describe(typing.get_args(tp)[0])}"
    if tp is type(None):
        return "null"
    if isinstance(tp, type) and issubclass(tp, Choice):
        return f"one of the {tp._registry.point}: {', '.join(tp._registry.names())}"
    if isinstance(tp, type) and issubclass(tp, Node):
        return f"a table with {field_list(tp)}"
    return {float: "a number", int: "an integer", bool: "true or false", str: "a string"}.get(
        tp, str(tp))


def coerce(tp: Any, value: Any, infinite_ok: bool = False) -> Any:
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
                return coerce(option, value, infinite_ok)
            except ConfigError as err:
                last = err
        if len(options) == 2 and last is not None:
            raise last
        raise ConfigError("", value, describe(tp))
    if origin is Literal:
        if value not in typing.get_args(tp):
            raise ConfigError("", value, describe(tp))
        return value
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError("", value, describe(tp))
        item = typing.get_args(tp)[0]
        out = []
        for i, v in enumerate(value):
            try:
                out.append(coerce(item, v, infinite_ok))
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
        raise ConfigError("", value, describe(tp))
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
