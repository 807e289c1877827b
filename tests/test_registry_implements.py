"""The one implementation table: implements / implementation_of."""

from dataclasses import dataclass

import pytest

from simfl.core.errors import ConfigError
from simfl.core.registry import has_implementation, implementation_of, implements


@dataclass(frozen=True)
class _Base:
    kind = "base"


@dataclass(frozen=True)
class _Child(_Base):
    kind = "child"


@dataclass(frozen=True)
class _Orphan:
    kind = "orphan"


def test_decorator_returns_the_implementation_and_subclasses_inherit_it():
    @implements(_Base)
    class Impl:
        pass

    assert implementation_of(_Base()) is Impl
    assert implementation_of(_Child) is Impl
    assert has_implementation(_Child) and not has_implementation(_Orphan)


def test_a_string_is_imported_on_first_use_and_a_missing_one_names_the_field():
    implements(_Child, "collections:OrderedDict")
    from collections import OrderedDict

    assert implementation_of(_Child()) is OrderedDict
    with pytest.raises(ConfigError, match="network.mac.kind"):
        implementation_of(_Orphan(), "network.mac.kind")


def test_a_plugged_implementation_is_not_replaced_by_a_built_in_one(monkeypatch):
    """A script that swaps a built-in kind's implementation before simfl's module naming
    the built-in is imported keeps its own; the kind is marked as plugged."""
    from simfl.core import registry

    monkeypatch.setattr(registry, "_IMPLEMENTATIONS", {})
    monkeypatch.setattr(registry, "_PLUGGED", set())

    class Mine:
        pass

    implements(_Base, Mine, plugged=True)
    implements(_Base, "collections:OrderedDict")  # the built-in module imported later
    assert implementation_of(_Child) is Mine and registry.is_plugged(_Child)
    implements(_Child, "collections:OrderedDict")
    assert implementation_of(_Child) is not Mine and not registry.is_plugged(_Child)
