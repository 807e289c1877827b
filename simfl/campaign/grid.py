"""A campaign's runs: seeds times grid points, each a fully resolved scenario with an id.

A run's id hashes its resolved scenario (seed included, as canonical JSON) together with
the simfl version, so the same point of the same study always has the same id and a
changed scenario or simfl release never reuses an old result. Its folder is named from
its grid values and seed, readable (``deadline_s=6,p=0.2,seed=3``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from typing import Any, Sequence

from simfl.core.config import Scenario, apply_overrides, parse_override
from simfl.core.config.scenario import MAX_OVERRIDE_CHARS
from simfl.core.errors import ConfigError

#: characters a run folder's name may hold; anything else becomes "_"
FOLDER_CHARS = re.compile(r"[^A-Za-z0-9_.+=,@-]")
#: longest run folder name (a longer one is cut and ends with part of the run id)
MAX_FOLDER_CHARS = 120
#: the most runs one sweep may expand to
MAX_RUNS = 100_000


@dataclass(frozen=True)
class RunSpec:
    """One run of a campaign: its id, readable folder name, grid values and scenario."""

    id: str
    folder: str
    params: dict[str, Any]  # grid key -> value, and "seed"
    scenario: dict[str, Any]  # Scenario.to_dict() of the resolved scenario


def parse_seeds(text: str) -> list[int]:
    """``"1-5"`` -> [1, 2, 3, 4, 5]; ``"1,3,7"`` and ``"2-3,9"`` work too."""
    seeds: list[int] = []
    try:
        for part in str(text).split(","):
            first, sep, last = part.strip().partition("-")
            if sep and first:
                a, b = int(first), int(last)
                if b < a or b - a >= MAX_RUNS:
                    raise ValueError
                seeds.extend(range(a, b + 1))
            else:
                seeds.append(int(part))
    except ValueError:
        raise ConfigError("--seeds", text, "seeds such as 1-5, 1,3,7 or 2-3,9 (non-negative "
                          "integers, ranges from low to high)") from None
    if any(s < 0 for s in seeds):
        raise ConfigError("--seeds", text, "non-negative integers")
    return list(dict.fromkeys(seeds))


def parse_grid(text: str) -> tuple[str, list[Any]]:
    """``"KEY=v1,v2"`` -> (KEY, [v1, v2]); each value is JSON when it parses (so
    ``task.model.hidden=[32],[64,64]`` gives two lists), else a plain string."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key or not raw.strip():
        raise ConfigError("--grid", text, "KEY=v1,v2,... with a dotted KEY such as "
                          "server.deadline_s=5,10")
    if key == "seed":
        raise ConfigError("--grid", text, "a scenario key other than seed (give seeds with "
                          "--seeds)")
    if len(raw) > MAX_OVERRIDE_CHARS:
        raise ConfigError("--grid", text, f"values of at most {MAX_OVERRIDE_CHARS:,} characters")
    try:
        values = json.loads(f"[{raw}]")
    except json.JSONDecodeError:
        values = [parse_override(f"{key}={item}")[1] for item in raw.split(",")]
    except RecursionError:
        raise ConfigError(key, raw, "JSON values nested a few levels deep") from None
    except ValueError:  # an integer with more digits than Python converts
        raise ConfigError(key, raw, "numbers of sensible size (at most 19 digits for an "
                          "integer)") from None
    unique: list[Any] = []
    for value in values:
        if value not in unique:
            unique.append(value)
    return key, unique


def run_id(scenario: dict[str, Any], version: str) -> str:
    """The hash of a resolved scenario and the simfl version (16 hex digits)."""
    text = json.dumps({"scenario": scenario, "simfl": version}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def short_keys(keys: Sequence[str]) -> dict[str, str]:
    """Each dotted key's shortest suffix that no other key ends with."""
    short = {}
    for key in keys:
        parts = key.split(".")
        for n in range(1, len(parts) + 1):
            tail = ".".join(parts[-n:])
            if not any(o != key and (o == tail or o.endswith("." + tail)) for o in keys):
                break
        short[key] = tail
    return short


def value_text(value: Any) -> str:
    """A grid or ``--set`` value as a folder name shows it: text as is, a table by its
    kind and fields (:func:`table_text`), anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return table_text(value)
    return json.dumps(value, separators=(",", ":"))


#: SI prefixes of :func:`number_text`, largest first
SI_PREFIXES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def number_text(value: float) -> str:
    """A number in few characters, exactly: ``12e6`` -> ``12M``, ``2500`` -> ``2500``,
    ``5e-05`` -> ``5e-05``, ``0.30000000000000004`` as itself (an SI prefix only where
    it is exact and shorter)."""
    plain = repr(float(value)) if isinstance(value, float) else str(value)
    plain = plain[:-2] if plain.endswith(".0") else plain
    for scale, prefix in SI_PREFIXES:
        if scale <= abs(value) < 1e15:
            mantissa = value / scale
            if mantissa * scale == value:
                text = repr(float(mantissa))
                text = (text[:-2] if text.endswith(".0") else text) + prefix
                if len(text) < len(plain):
                    return text
            break
    return plain


def table_text(table: dict[str, Any]) -> str:
    """A table given as one value (``network.mac={"kind": "csma_ca", "phy_rate_bps":
    12e6}``) as a folder name shows it: its kind, then each other field, joined by
    ``_``: a number after its key's first word (``phy12M``), text as itself, a flag as
    its key (``no_`` before it when false): ``csma_ca_phy12M``. Two fields whose keys
    start with the same word are shown by their whole keys."""
    fields = {k: v for k, v in table.items() if k != "kind"}
    firsts = [str(k).split("_")[0] or str(k) for k in fields]
    parts = [str(table["kind"])] if "kind" in table else []
    for (key, value), first in zip(fields.items(), firsts):
        short = first if firsts.count(first) == 1 else str(key)
        if isinstance(value, bool):
            parts.append(str(key) if value else f"no_{key}")
        elif isinstance(value, (int, float)):
            parts.append(f"{short}{number_text(value)}")
        elif isinstance(value, str):
            parts.append(value)
        elif isinstance(value, dict):
            parts.append(f"{short}-{table_text(value)}")
        else:
            parts.append(f"{short}-{json.dumps(value, separators=(',', ':'))}")
    return "_".join(parts) or "{}"


def folder_name(params: dict[str, Any], short: dict[str, str], id: str,
                tables_as_json: bool = False) -> str:
    """A readable folder name: ``short_key=value,...,seed=N``, limited to FOLDER_CHARS
    (``tables_as_json``: a table value as JSON text, the names of earlier releases)."""
    def text(value: Any) -> str:
        if tables_as_json and isinstance(value, dict):
            return json.dumps(value, separators=(",", ":"))
        return value_text(value)

    parts = [f"{short.get(k, k)}={text(v)}" for k, v in params.items() if k != "seed"]
    name = FOLDER_CHARS.sub("_", ",".join(parts + [f"seed={params['seed']}"]))
    if len(name) > MAX_FOLDER_CHARS:
        name = f"{name[:MAX_FOLDER_CHARS - 17]}@{id}"
    return name


def expand(base: Scenario, overrides: list[tuple[str, Any]], grid: list[tuple[str, list[Any]]],
           seeds: list[int] | None, version: str) -> list[RunSpec]:
    """Every run of a sweep, grid points in the order given (the last key varies fastest),
    seeds innermost; a point that resolves to a scenario already listed is listed once."""
    seeds = seeds if seeds is not None else [base.seed]
    n_runs = len(seeds)
    for _, values in grid:
        n_runs *= len(values)
    if n_runs > MAX_RUNS:
        raise ConfigError("--grid", f"{n_runs:,} runs", f"at most {MAX_RUNS:,} runs per sweep")
    keys = [key for key, _ in grid]
    short = short_keys(keys)
    specs: dict[str, RunSpec] = {}
    names: dict[str, dict[str, Any]] = {}
    for combination in itertools.product(*(v for _, v in grid)):
        point = dict(zip(keys, combination))
        for seed in seeds:
            scenario = apply_overrides(base, [*overrides, *point.items(), ("seed", seed)])
            plain = scenario.to_dict()
            id = run_id(plain, version)
            if id in specs:
                continue
            params = {**point, "seed": seed}
            name = folder_name(params, short, id)
            if name in names:  # two values that read the same once sanitised
                raise ConfigError("--grid", _differing(names[name], point), f"grid values "
                                  f"that name distinct run folders (both name {name!r}: give "
                                  f"the tables the same fields, or grid those fields as "
                                  f"keys of their own)")
            names[name] = point
            specs[id] = RunSpec(id, name, params, plain)
    return list(specs.values())


def _differing(a: dict[str, Any], b: dict[str, Any]) -> str:
    """The grid values of two points where they differ, as ``KEY: A vs B``."""
    keys = [k for k in a if a[k] != b.get(k)]
    return "; ".join(f"{k}: {json.dumps(a[k])} vs {json.dumps(b.get(k))}" for k in keys)
