"""Curves of many runs: find run folders, group runs that differ only by seed, put each
group's curves on a common grid, and summarise them as a mean with a band.

Everything here reads run folders (``config.json``, ``evals.csv``, ``rounds.csv``) and
nothing else, so it works on any folder of runs: one made by hand, by a script's loop or
by a campaign.

Grouping. Each run's scenario tree (``config.json``'s ``scenario``) is flattened to
dotted keys (``network.mac.access_prob``); two runs belong to the same line when every
key except ``seed`` and ``name`` has the same value. Lines keep the order in which their
first run appears.

Common grid. A run's curve is a step function: the value at x is its last sample at or
before x (the model evaluated at t stays the model in force until the next evaluation).
A group's grid is the union of its runs' sample positions between the latest first
sample and the earliest last sample, so every point of a line averages every run of its
group; the tail that only some seeds reach is not drawn.

Bands. ``ci``: the 95% confidence interval of the mean across seeds, mean ± t(0.975,
n-1) s / sqrt(n) with s the sample standard deviation (n - 1 in the denominator);
``minmax``: the lowest and highest run; ``none``. A line of one run has no band.
"""

from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from simfl.core.errors import ConfigError, SimflError

#: keys of the flattened scenario tree that never separate two lines
IGNORED_KEYS = ("seed", "name")
#: band kinds of :func:`band`
BANDS = ("ci", "minmax", "none")
#: x axes: the evals.csv column, the rounds.csv column and the axis label
X_AXES = ("time", "round")
#: seconds per unit of the time axis
TIME_UNITS_S = {"s": 1.0, "min": 60.0, "h": 3600.0}
#: differing keys a legend label names before it says "+N more"
MAX_LABEL_KEYS = 4
#: columns that are positions, not metrics
POSITION_COLUMNS = ("t_s", "round", "t_open_s", "t_close_s", "session")


@dataclass(frozen=True)
class Run:
    """One run folder: its path, its scenario tree and its seed."""

    path: Path
    scenario: dict[str, Any]
    seed: Any

    @property
    def params(self) -> dict[str, Any]:
        """The flattened scenario tree without the keys that never separate lines."""
        return {k: v for k, v in flatten(self.scenario).items() if k not in IGNORED_KEYS}

    @property
    def target_accuracy(self) -> float | None:
        return self.scenario.get("run", {}).get("target_accuracy")


@dataclass(frozen=True)
class Series:
    """One run's metric: sample positions ``x``, values ``y`` (NaN-free) and the x of
    its session changes (the last sample of each session that ends)."""

    x: np.ndarray
    y: np.ndarray
    session_changes: tuple[float, ...] = ()


@dataclass(frozen=True)
class Line:
    """A group of runs that differ only by seed, on its common grid."""

    runs: tuple[Run, ...]
    label: str
    x: np.ndarray
    mean: np.ndarray
    lower: np.ndarray | None
    upper: np.ndarray | None
    session_changes: tuple[float, ...] = field(default=())
    #: lowest and highest value of its runs on the grid
    runs_range: tuple[float, float] = (math.nan, math.nan)


# ---------------------------------------------------------------------------------
# finding and reading run folders


def is_run_folder(path: Path) -> bool:
    return (path / "config.json").is_file()


def find_runs(paths: Iterable[Path]) -> tuple[list[Path], list[Path]]:
    """Run folders named by ``paths``, and the unfinished ones that were left out.

    A path holding ``config.json`` is a run folder and is taken as it is (finished or
    not). Any other folder is searched for run folders below it, in natural order of
    their names (``p=0.2`` before ``p=0.05``... by the numbers: ``seed2`` before
    ``seed10``); a run found this way that has no ``summary.json`` yet (still running,
    or crashed) is left out and returned in the second list.
    """
    found: list[Path] = []
    unfinished: list[Path] = []
    for path in paths:
        path = Path(path)
        if not path.is_dir():
            raise SimflError(f"not a run folder or a folder of runs: {path}")
        if is_run_folder(path):
            found.append(path)
            continue
        below = list(_walk(path))
        if not below:
            raise SimflError(f"no run folder (a folder with config.json) in {path}")
        for run_dir in below:
            (found if (run_dir / "summary.json").is_file() else unfinished).append(run_dir)
    return found, unfinished


def _walk(folder: Path) -> Iterable[Path]:
    for child in sorted((p for p in folder.iterdir() if p.is_dir()), key=natural_key):
        if is_run_folder(child):
            yield child
        else:
            yield from _walk(child)


def natural_key(path: Path) -> list:
    """Sort key of a name that orders its numbers by value (``seed2`` < ``seed10``)."""
    parts = re.split(r"(\d+(?:\.\d+)?)", path.name)
    return [(0, float(p), "") if i % 2 else (1, 0.0, p) for i, p in enumerate(parts)]


def read_run(path: Path) -> Run:
    """The run folder's scenario tree and seed from its ``config.json``."""
    config_file = Path(path) / "config.json"
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
        scenario = config["scenario"]
        if not isinstance(scenario, dict):
            raise TypeError
    except OSError as err:
        raise SimflError(f"cannot read {config_file}: {err.strerror or err}") from None
    except (ValueError, KeyError, TypeError):
        raise SimflError(f"{config_file} is not a simfl config.json (no scenario object; "
                         f"an unfinished run?)") from None
    return Run(Path(path), scenario, config.get("seed", scenario.get("seed")))


def flatten(tree: Any, prefix: str = "") -> dict[str, Any]:
    """Leaves of a nested dict as ``{"dotted.key": value}``; lists become JSON text."""
    if isinstance(tree, dict):
        flat: dict[str, Any] = {}
        for key, value in tree.items():
            flat.update(flatten(value, f"{prefix}{key}."))
        return flat
    if isinstance(tree, list):
        tree = json.dumps(tree)
    return {prefix[:-1]: tree}


def read_table(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """Header and rows of a CSV file; a missing or unreadable file names itself."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            rows = list(reader)
            return list(reader.fieldnames or ()), rows
    except OSError as err:
        raise SimflError(f"cannot read {path}: {err.strerror or err} "
                         f"(is it a simfl run folder?)") from None
    except (csv.Error, UnicodeDecodeError) as err:
        raise SimflError(f"{path} is not a CSV table: {err}") from None


def metric_table(run_dir: Path, metric: str) -> str:
    """``"evals"`` or ``"rounds"``: the table of ``run_dir`` that has the column ``metric``."""
    headers = {}
    for table in ("evals", "rounds"):
        path = run_dir / f"{table}.csv"
        headers[table] = read_table(path)[0] if path.is_file() else []
        if metric in headers[table] and metric not in POSITION_COLUMNS:
            return table
    allowed = [c for t in ("evals", "rounds") for c in headers[t] if c not in POSITION_COLUMNS]
    raise ConfigError("--metric", metric, f"a column of {run_dir}'s evals.csv or rounds.csv: "
                      f"{', '.join(allowed) or 'none (no tables there)'}")


def read_series(run_dir: Path, metric: str, x: str = "time") -> Series:
    """``metric`` of one run against simulated time (s) or rounds completed.

    Evaluation columns are taken at the evaluation's ``t_s`` or ``round``; round columns
    at the round's ``t_close_s``, or at ``round + 1`` (the rounds completed at its close,
    the same count as ``evals.csv``'s ``round``). Empty or NaN values are skipped.
    """
    table = metric_table(run_dir, metric)
    path = run_dir / f"{table}.csv"
    header, rows = read_table(path)
    if table == "evals":
        x_col, x_shift = ("t_s", 0) if x == "time" else ("round", 0)
    else:
        x_col, x_shift = ("t_close_s", 0) if x == "time" else ("round", 1)
    xs, ys, sessions = [], [], []
    for line, row in enumerate(rows, start=2):
        try:
            value = float(row[metric]) if row[metric] not in ("", "None") else math.nan
            position = float(row[x_col]) + x_shift
        except (TypeError, ValueError):
            raise SimflError(f"{path} line {line}: {metric} = {row[metric]!r} or "
                             f"{x_col} = {row[x_col]!r} is not a number") from None
        if "session" in header:
            sessions.append((position, row["session"]))
        if math.isfinite(value):
            xs.append(position)
            ys.append(value)
    if not xs:
        hint = " (a --timing-only run?)" if table == "evals" else ""
        raise SimflError(f"{path} has no {metric} values{hint}.")
    changes = tuple(p for (p, s), (_, s_next) in zip(sessions, sessions[1:]) if s != s_next)
    return Series(np.asarray(xs), np.asarray(ys), changes)


# ---------------------------------------------------------------------------------
# grouping and labels


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


# ---------------------------------------------------------------------------------
# common grid and bands


def step_values(x: np.ndarray, y: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Value at each grid point of the step function through (x, y): the last sample at or
    before it (the last of equal positions); NaN before the first sample."""
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    index = np.searchsorted(x, grid, side="right") - 1
    out = np.where(index >= 0, y[np.clip(index, 0, None)], np.nan)
    return out.astype(float)


def common_grid(series: Sequence[Series]) -> np.ndarray:
    """The union of the series' positions from the latest first to the earliest last."""
    lo = max(float(s.x.min()) for s in series)
    hi = min(float(s.x.max()) for s in series)
    grid = np.unique(np.concatenate([s.x for s in series]))
    return grid[(grid >= lo) & (grid <= hi)]


def t_quantile_975(dof: int) -> float:
    """The 0.975 quantile of Student's t with ``dof`` degrees of freedom."""
    from scipy.stats import t

    return float(t.ppf(0.975, dof))


def band(values: np.ndarray, kind: str = "ci") -> tuple[np.ndarray, np.ndarray | None,
                                                        np.ndarray | None]:
    """Mean over runs (rows) of ``values`` and the band's lower and upper edges.

    ``ci``: mean ± t(0.975, n-1) · s / sqrt(n); ``minmax``: per-point min and max;
    ``none`` (or a single run): no band (None, None).
    """
    if kind not in BANDS:
        raise ConfigError("--band", kind, " or ".join(BANDS))
    values = np.asarray(values, dtype=float)
    mean = values.mean(axis=0)
    n = values.shape[0]
    if kind == "none" or n < 2:
        return mean, None, None
    if kind == "minmax":
        return mean, values.min(axis=0), values.max(axis=0)
    half = t_quantile_975(n - 1) * values.std(axis=0, ddof=1) / math.sqrt(n)
    return mean, mean - half, mean + half


def build_lines(runs: Sequence[Run], metric: str, x: str = "time", band_kind: str = "ci",
                labels: Sequence[str] | None = None) -> list[Line]:
    """One :class:`Line` per group of runs that differ only by seed."""
    if x not in X_AXES:
        raise ConfigError("--x", x, " or ".join(X_AXES))
    if band_kind not in BANDS:
        raise ConfigError("--band", band_kind, " or ".join(BANDS))
    groups = group_by_seed(runs)
    if labels:
        if len(labels) != len(groups):
            raise ConfigError("--label", list(labels), f"{len(groups)} labels, one per line in "
                              f"order: {'; '.join(group_labels(groups))}")
    else:
        labels = group_labels(groups)
    lines = []
    for group, label in zip(groups, labels):
        series = [read_series(run.path, metric, x) for run in group]
        grid = common_grid(series)
        if grid.size == 0:
            raise SimflError(f"the runs of {label!r} share no stretch of {x} "
                             f"({', '.join(str(r.path) for r in group)})")
        values = np.vstack([step_values(s.x, s.y, grid) for s in series])
        mean, lower, upper = band(values, band_kind)
        changes = tuple(sorted({c for s in series for c in s.session_changes}))
        lines.append(Line(tuple(group), label, grid, mean, lower, upper, changes,
                          (float(values.min()), float(values.max()))))
    return lines
