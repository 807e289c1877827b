"""Grouping runs into lines and naming the lines: runs that differ only by seed are one
line, and a line's legend label names the parameters that differ between lines.

Grouping. Each run's scenario tree (``config.json``'s ``scenario``) is flattened to
dotted keys (``network.mac.access_prob``); two runs belong to the same line when every
key except ``seed`` and ``name`` has the same value. Lines keep the order in which their
first run appears.

Labels. A line is named by the keys that differ between lines, each by its last part
(``deadline_s=6``, ``mac=tdma`` for ``network.mac.kind``). Where every run records the
values it was given (``--set``, grid values: :mod:`simfl.metrics.given_values`), only
given keys are named, so a kind given with a few fields (``mac=csma_ca,
phy_rate_bps=1.2e+07`` against ``mac=slotted_aloha``) is not followed by every default
that differs only because the kinds differ. Where more than a few keys differ (two
different scenarios side by side), a line is named by its runs' folder instead.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Sequence

from simfl.metrics.run_folders import Run

#: the most differing keys a legend label names; with more, lines are named by folder
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
    """Each dotted key shortened to its last part, or more where one would clash.

    A choice's ``kind`` is named by its section (``network.mac.kind`` -> ``mac``, the
    same name as a section set to null, ``server.sampler`` -> ``sampler``);
    ``server.deadline_s`` -> ``deadline_s``; ``a.rate_bps`` and ``b.rate_bps`` ->
    ``a.rate_bps`` and ``b.rate_bps``.
    """
    def named(key: str) -> str:
        return key[: -len(".kind")] if key.endswith(".kind") else key

    concepts = list(dict.fromkeys(named(k) for k in keys))
    short = {}
    for key in keys:
        parts = named(key).split(".")
        for n in range(1, len(parts) + 1):
            tail = ".".join(parts[-n:])
            if sum(1 for c in concepts if c == tail or c.endswith("." + tail)) == 1:
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
    :func:`short_keys`), preceded by the scenario's name where the names differ too.
    Where more than ``max_keys`` keys differ (two different scenarios), or the labels
    would not tell the groups apart, each group is named by its folder
    (:func:`folder_labels`). One group: the scenario's name.
    """
    params = [group[0].params for group in groups]
    names = [str(group[0].scenario.get("name", group[0].path.name)) for group in groups]
    if len(groups) == 1:
        return [", ".join(dict.fromkeys(str(r.scenario.get("name", r.path.name))
                                        for r in groups[0]))]
    given = given_labels(groups, names, max_keys)
    if given is not None:
        return given
    keys = label_keys(params)
    if not keys or len(keys) > max_keys:
        return folder_labels(groups)
    short = short_keys(keys)
    labels = []
    for name, p in zip(names, params):
        items = [f"{short[k]}={format_value(p[k])}" for k in keys if k in p]
        if len(set(names)) > 1:
            items.insert(0, name)
        labels.append(", ".join(items) or "defaults")
    return labels if len(set(labels)) == len(labels) else folder_labels(groups)


def given_labels(groups: Sequence[Sequence[Run]], names: Sequence[str],
                 max_keys: int = MAX_LABEL_KEYS) -> list[str] | None:
    """Labels from the keys whose given values differ between groups, or None where a
    run does not record its given values, no given key differs, more than twice
    ``max_keys`` differ, or the labels would not tell the groups apart.

    The keys are those given to any group; their values are the resolved ones (``5`` and
    ``5.0`` given are one value; a key a later kind switch removed is not shown). A group
    shows a key it was given; one it was not given only when no kind above it differs
    between groups (a default that comes with another kind is not a choice).
    """
    givens = [group[0].given for group in groups]
    if any(run.given is None for group in groups for run in group):
        return None
    params = [group[0].params for group in groups]
    union = [k for g in givens if g is not None for k in g]
    values = [{k: p[k] for k in union if k in p} for p in params]
    keys = differing_keys(values)
    if not keys or len(keys) > 2 * max_keys:
        return None
    kinds = [k[: -len("kind")] for k in keys if k == "kind" or k.endswith(".kind")]
    short = short_keys(keys)
    labels = []
    for name, g, v in zip(names, givens, values):
        assert g is not None
        items = [f"{short[k]}={format_value(v[k])}" for k in keys if k in g or (
            k in v and not any(k.startswith(p) and k != p + "kind" for p in kinds))]
        if len(set(names)) > 1:
            items.insert(0, name)
        labels.append(", ".join(items) or "defaults")
    return labels if len(set(labels)) == len(labels) else None


#: a seed in a folder's name (``quickstart_seed2``, ``p=0.1_seed5``), left out of labels
SEED_IN_NAME = re.compile(r"[_-]?seed\d+")


def folder_labels(groups: Sequence[Sequence[Run]]) -> list[str]:
    """Each group named by its runs' folders: the path below the folder common to all
    runs, without seed parts (``runs/battery_inf`` -> ``battery_inf``,
    ``c/p=0.1/seed3`` -> ``p=0.1``); a group whose runs' names still differ is named by
    what they share, or by its first run's name."""
    paths = [r.path.resolve() for g in groups for r in g]
    root = Path(os.path.commonpath(paths)) if len(paths) > 1 else paths[0].parent
    labels = []
    for group in groups:
        names = []
        for run in group:
            path = run.path.resolve()
            parts = path.relative_to(root).parts if path != root else (path.name,)
            kept = [SEED_IN_NAME.sub("", part) for part in parts]
            names.append("/".join(p for p in kept if p) or path.name)
        unique = list(dict.fromkeys(names))
        shared = os.path.commonprefix(unique).rstrip("_-=/. ")
        labels.append(unique[0] if len(unique) == 1 else shared or group[0].path.name)
    return labels
