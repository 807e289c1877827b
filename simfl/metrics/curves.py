"""Curves of many runs: find run folders, group runs that differ only by seed, put each
group's curves on a common grid, and summarise them as a mean with a band.

Finding and reading run folders lives in :mod:`simfl.metrics.run_folders`, grouping
runs into lines and labelling them in :mod:`simfl.metrics.grouping`; this module puts
each group on its grid and draws its band (:func:`build_lines`), and re-exports the
names of the other two that its callers import from here.

Common grid. A run's curve is a step function: the value at x is its last sample at or
before x (the model evaluated at t stays the model in force until the next evaluation).
A group's grid is the union of its runs' sample positions between the latest first
sample and the earliest last sample, so every point of a line averages every run of its
group; the tail that only some seeds reach is not drawn.

Bands. ``ci``: the 95% confidence interval of the mean across seeds, mean ± t(0.975,
n-1) s / sqrt(n) with s the sample standard deviation (n - 1 in the denominator);
``minmax``: the lowest and highest run; ``none``. A line of fewer than three runs has
no band (see :mod:`simfl.metrics.plot_style`: its runs are drawn one by one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from simfl.core.errors import ConfigError, SimflError
from simfl.metrics.grouping import (MAX_LABEL_KEYS, differing_keys, format_value,
                                    group_by_seed, group_labels, label_keys, short_keys)
from simfl.metrics.run_folders import (IGNORED_KEYS, POSITION_COLUMNS, Run, Series,
                                       find_runs, flatten, is_run_folder, metric_table,
                                       natural_key, read_run, read_series, read_table)
from simfl.metrics.plot_style import TIME_UNITS_S, seed_display

__all__ = [
    "IGNORED_KEYS", "BANDS", "X_AXES", "TIME_UNITS_S", "MAX_LABEL_KEYS", "POSITION_COLUMNS",
    "Run", "Series", "Line", "is_run_folder", "find_runs", "natural_key", "read_run",
    "flatten", "read_table", "metric_table", "read_series", "group_by_seed",
    "differing_keys", "label_keys", "short_keys", "format_value", "group_labels",
    "step_values", "common_grid", "t_quantile_975", "band", "build_lines",
]

#: band kinds of :func:`band`
BANDS = ("ci", "minmax", "none")
#: x axes: the evals.csv column, the rounds.csv column and the axis label
X_AXES = ("time", "round")


@dataclass(frozen=True)
class Line:
    """A group of runs that differ only by seed, on its common grid: the mean, the band
    (None where it has none) and each run's values (a row per run)."""

    runs: tuple[Run, ...]
    label: str
    x: np.ndarray
    mean: np.ndarray
    lower: np.ndarray | None
    upper: np.ndarray | None
    session_changes: tuple[float, ...] = field(default=())
    #: lowest and highest value of its runs on the grid
    runs_range: tuple[float, float] = (math.nan, math.nan)
    values: np.ndarray | None = None


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
    """One :class:`Line` per group of runs that differ only by seed; a band only where
    :func:`~simfl.metrics.plot_style.seed_display` draws one (three runs or more)."""
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
        if seed_display(len(group), band_kind) != "band":
            lower = upper = None
        changes = tuple(sorted({c for s in series for c in s.session_changes}))
        lines.append(Line(tuple(group), label, grid, mean, lower, upper, changes,
                          (float(values.min()), float(values.max())), values))
    return lines
