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
    """A grid or ``--set`` value as a folder name shows it: text as is, else JSON."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def folder_name(params: dict[str, Any], short: dict[str, str], id: str) -> str:
    """A readable folder name: ``short_key=value,...,seed=N``, limited to FOLDER_CHARS."""
    parts = [f"{short.get(k, k)}={value_text(v)}" for k, v in params.items() if k != "seed"]
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
    names: set[str] = set()
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
                name = f"{name[:MAX_FOLDER_CHARS - 17]}@{id}"
            names.add(name)
            specs[id] = RunSpec(id, name, params, plain)
    return list(specs.values())
