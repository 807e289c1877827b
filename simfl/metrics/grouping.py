"""Grouping runs into lines and naming the lines: runs that differ only by seed are one
line, and a line's legend label names the parameters that differ between lines.

Grouping. Each run's scenario tree (``config.json``'s ``scenario``) is flattened to
dotted keys (``network.mac.access_prob``); two runs belong to the same line when every
key except ``seed`` and ``name`` has the same value. Lines keep the order in which their
first run appears.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from simfl.metrics.run_folders import Run

#: differing keys a legend label names before it says "+N more"
MAX_LABEL_KEYS = 4


def group_by_seed(runs: Sequence[Run]) -> list[list[Run]]:
    """Runs that differ only by seed (and name), in order of first appearance."""
    groups: dict[str, list[Run]] = {}
    for run in runs:
        key = json.dumps(sorted(run.params.items()), default=str)
        groups.setdefault(key, []).append(run)
    return list(groups.values())


def differing_keys(params: Sequence[dict[str, Any]]) -> list[str]:
    """Dotted keys whose value is not the same in every dict (missing counts as a value),
    in tree order: the order they first appear, a key first seen in a later dict placed
    after its closest relative (``mac.slot_s`` after ``mac.kind``)."""
    keys: list[str] = []
    for p in params:
        for key in p:
            if key not in keys:
                keys.insert(_insertion_index(keys, key), key)
    return [k for k in keys
            if len({json.dumps(p[k], default=str) if k in p else "" for p in params}) > 1]


def label_keys(params: Sequence[dict[str, Any]]) -> list[str]:
    """The differing keys worth naming in labels: :func:`differing_keys` less the fields
    that come with a choice's kind (``mac.access_prob`` when ``mac.kind`` differs and
    every group that has the field gives it the same value)."""
    keys = differing_keys(params)
    kinds = {k[: -len("kind")] for k in keys if k == "kind" or k.endswith(".kind")}

    def implied(key: str) -> bool:
        having = [p[key] for p in params if key in p]
        if len(having) == len(params):
            return False
        same = len({json.dumps(v, default=str) for v in having}) == 1
        return same and any(key.startswith(prefix) and key != prefix + "kind"
                            for prefix in kinds)

    return [k for k in keys if not implied(k)]


def _insertion_index(keys: list[str], key: str) -> int:
    """Where ``key`` goes in ``keys``: after the last key sharing its longest dotted prefix."""
    parts = key.split(".")
    best, index = 0, len(keys)
    for i, other in enumerate(keys):
        common = 0
        for a, b in zip(parts, other.split(".")):
            if a != b:
                break
            common += 1
        if common and common >= best:
            best, index = common, i + 1
    return index


def short_keys(keys: Sequence[str]) -> dict[str, str]:
    """Each dotted key shortened to its last two parts, or more where two would clash
    (``network.mac.access_prob`` -> ``mac.access_prob``)."""
    short = {}
    for key in keys:
        parts = key.split(".")
        for n in range(min(2, len(parts)), len(parts) + 1):
            tail = ".".join(parts[-n:])
            if sum(1 for k in keys if k == tail or k.endswith("." + tail)) == 1:
                break
        short[key] = tail
    return short


def format_value(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def group_labels(groups: Sequence[Sequence[Run]], max_keys: int = MAX_LABEL_KEYS) -> list[str]:
    """Legend labels naming the parameters that differ between groups.

    ``KEY=VALUE`` for each differing key the group has (keys shortened by
    :func:`short_keys`), at most ``max_keys`` of them and then ``+N more``; preceded by
    the scenario's name where the names differ too. One group: the scenario's name.
    """
    params = [group[0].params for group in groups]
    names = [str(group[0].scenario.get("name", group[0].path.name)) for group in groups]
    keys = label_keys(params)
    if not keys:
        return [", ".join(dict.fromkeys(str(r.scenario.get("name", r.path.name))
                                        for g in groups for r in g))] * len(groups)
    short = short_keys(keys)
    labels = []
    for name, p in zip(names, params):
        items = [f"{short[k]}={format_value(p[k])}" for k in keys if k in p]
        if len(items) > max_keys:
            items = items[:max_keys] + [f"+{len(items) - max_keys} more"]
        if len(set(names)) > 1:
            items.insert(0, name)
        labels.append(", ".join(items) or "defaults")
    return labels
