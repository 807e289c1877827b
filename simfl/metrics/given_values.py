"""The values a run was *given*: the ``--set`` overrides of ``simfl run`` and the
``--set`` and grid values of a campaign's run, as its ``provenance.json`` records them.

A legend names what the user varied, and that is what was given: two runs whose MACs
were given as whole tables (``network.mac={"kind": "csma_ca", "phy_rate_bps": 12e6}``)
resolve to scenarios that also differ in every default that comes with the kind, which
nobody chose. ``provenance.json``'s ``given`` holds ``[key, value]`` pairs in the order
given; a folder written before it existed has its ``simfl run`` command line instead,
whose ``--set`` items are read back. A folder with neither (written by hand, or by the
Python API) has no given values: its lines are named from the resolved scenario.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from simfl.core.config import parse_override
from simfl.core.errors import SimflError

#: keys that never name a line (they are the folder's name and its seed)
NOT_SHOWN = ("seed", "name")


def read_given(run_dir: Path, resolved: dict[str, Any]) -> dict[str, Any] | None:
    """The given values of the run in ``run_dir``, flattened to dotted keys (see
    :func:`flatten_given`), or None when the folder does not record them."""
    path = Path(run_dir) / "provenance.json"
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    pairs = record.get("given")
    if pairs is None:
        pairs = _set_items(record.get("command"))
    if not isinstance(pairs, list) or not all(
            isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in pairs):
        return None
    try:
        return flatten_given([(p[0], p[1]) for p in pairs], resolved)
    except RecursionError:  # a table nested deeper than any scenario: not a record of ours
        return None


def _set_items(command: Any) -> list[list[Any]] | None:
    """The ``--set KEY=VALUE`` items of a recorded ``simfl run`` command line."""
    if not isinstance(command, list) or not all(isinstance(c, str) for c in command):
        return None
    if command[1:2] != ["run"]:
        return None
    items = []
    for flag, text in zip(command, command[1:]):
        if flag == "--set":
            try:
                items.append(list(parse_override(text)))
            except SimflError:
                return None
    return items


def flatten_given(pairs: Sequence[tuple[str, Any]], resolved: dict[str, Any]) -> dict[str, Any]:
    """Given ``(dotted key, value)`` pairs as leaves of the scenario tree: a table is
    spread over its fields (``network.mac={"kind": "x"}`` -> ``network.mac.kind``), a
    kind given as bare text (``network.mac=tdma``) is the section's ``kind``, and a later
    value of a key replaces an earlier one (and everything given below it)."""
    given: dict[str, Any] = {}
    for key, value in pairs:
        if key in NOT_SHOWN:
            continue
        for old in [k for k in given if k == key or k.startswith(key + ".")]:
            del given[old]
        if isinstance(value, dict):
            given.update(_leaves(value, key))
        elif isinstance(value, str) and f"{key}.kind" in resolved:
            given[f"{key}.kind"] = value
        else:
            given[key] = json.dumps(value) if isinstance(value, list) else value
    return given


def _leaves(tree: dict[str, Any], prefix: str) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            flat.update(_leaves(value, f"{prefix}.{key}"))
        else:
            flat[f"{prefix}.{key}"] = json.dumps(value) if isinstance(value, list) else value
    return flat
