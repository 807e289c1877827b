"""The scenario tree as sites for generated overrides: every field of every kind.

A site is ``(switches, key, type, infinite_ok)``: the ``--set`` pairs that select the
kinds on the way (``network.uplink.kind=erasure``), the dotted key of one field and its
annotated type. Sites whose kind switches alone do not validate (a ``trace`` with no
file) are left out, so that an error can only come from the generated value.
"""

from __future__ import annotations

import dataclasses
import typing

from simfl.core.config import Scenario
from simfl.core.config.node import Choice, Node, field_types


@dataclasses.dataclass(frozen=True)
class Site:
    switches: tuple[str, ...]
    key: str
    type: typing.Any
    infinite_ok: bool
    per_client: bool


#: per-client list fields: a list must have task.n_clients entries
PER_CLIENT = {"population.availability.p", "server.algorithm.p", "network.mac.access_prob",
              "network.mac.probs"}


def _node_class(tp: typing.Any) -> type[Node] | None:
    options = [a for a in typing.get_args(tp) if a is not type(None)] or [tp]
    if len(options) == 1 and isinstance(options[0], type) and issubclass(options[0], Node):
        return options[0]
    return None


def sites(root: type[Node] = Scenario) -> list[Site]:
    """Every leaf field below ``root`` under every registered kind."""
    found: list[Site] = []

    def walk(cls: type[Node], prefix: str, switches: tuple[str, ...],
             above: tuple[type, ...] = ()) -> None:
        if cls in above:  # a kind nested in itself (native's fallback partition): once
            return
        above = above + (cls,)
        for name, tp in field_types(cls).items():
            if name not in cls.field_names():
                continue
            key = f"{prefix}{name}"
            sub = _node_class(tp)
            if sub is None:
                found.append(Site(switches, key, tp, name in getattr(cls, "infinite_ok", ()),
                                   key in PER_CLIENT))
            elif issubclass(sub, Choice):
                for entry in sub._registry:
                    walk(entry.obj, f"{key}.", switches + (f"{key}.kind={entry.name}",), above)
            else:
                walk(sub, f"{key}.", switches, above)

    walk(root, "", ())
    return found
