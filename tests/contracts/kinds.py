"""What every contract suite shares: the kinds of an extension point, read from its
registry (plug-ins loaded first), each built from its defaults or from a case the suite
declares, and a way to add a kind for the length of one test."""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import pytest

from simfl.core.errors import SimflError
from simfl.core import registry as registry_module
from simfl.core.registry import REGISTRIES
from simfl.plugins import load_plugins

load_plugins()


def kinds(point: str) -> list[str]:
    """Every registered kind of ``point``, in registration order."""
    return REGISTRIES[point].names()


def config_of(point: str, name: str, cases: dict[str, Callable[[], Any]]) -> Any:
    """The config of kind ``name``: its declared case, else its defaults."""
    if name in cases:
        return cases[name]()
    try:
        return REGISTRIES[point].get(name)()
    except SimflError as err:
        pytest.fail(f"{point}: {name!r} cannot be built from its defaults ({err}); declare "
                    "a case for it in its contract suite")


@contextlib.contextmanager
def registered_for_now(point: str) -> Iterator[None]:
    """Kinds defined inside the block, and the implementations registered there, are
    forgotten after it."""
    registry = REGISTRIES[point]
    entries = dict(registry._entries)
    implementations = dict(registry_module._IMPLEMENTATIONS)
    plugged = set(registry_module._PLUGGED)
    try:
        yield
    finally:
        registry._entries = entries
        registry_module._IMPLEMENTATIONS.clear()
        registry_module._IMPLEMENTATIONS.update(implementations)
        registry_module._PLUGGED.clear()
        registry_module._PLUGGED.update(plugged)
