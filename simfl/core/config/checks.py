"""Validation helpers for the sections' ``validate`` methods.

Each checks one rule on named fields of a node (a field left null passes) and raises a
:class:`ConfigError` naming the field, its value and what is allowed.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from simfl.core.errors import ConfigError

if TYPE_CHECKING:
    from simfl.core.config.node import Node


def require(ok: bool, field: str, value: object, allowed: str) -> None:
    """Raise a ConfigError for ``field`` unless ``ok``."""
    if not ok:
        raise ConfigError(field, value, allowed)


#: the largest step size (learning rate, server step, weight decay): beyond it one step
#: of training overflows float32 and the model is lost to inf and NaN
MAX_STEP_SIZE = 1e3
#: the largest power a device draws or a charger delivers (watts): far above any client
#: device, and small enough that energy over any simulated time stays finite
MAX_POWER_W = 1e4


def at_most(node: Node, limit: float, *names: str, why: str = "") -> None:
    """Each of ``names`` (when set) is at most ``limit``: keeps counts and sizes sane.

    ``why`` words what the limit protects, for the message.
    """
    allowed = f"a number <= {limit:g}" + (f" ({why})" if why else "")
    for name in names:
        value = getattr(node, name)
        if value is not None:
            require(value <= limit, name, value, allowed)


def step_size(node: Node, *names: str) -> None:
    """Each of ``names`` (when set) is a step size in (0, :data:`MAX_STEP_SIZE`]."""
    positive(node, *names)
    at_most(node, MAX_STEP_SIZE, *names, why="a larger step size overflows training")


def power_w(node: Node, *names: str) -> None:
    """Each of ``names`` (when set) is a power in [0, :data:`MAX_POWER_W`] watts."""
    non_negative(node, *names)
    at_most(node, MAX_POWER_W, *names, why="watts; no client device draws more")


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


def finite(node: Node, *names: str) -> None:
    """Each of ``names`` (when set) is a finite number."""
    for name in names:
        value = getattr(node, name)
        if value is not None:
            require(math.isfinite(value), name, value, "a finite number")
