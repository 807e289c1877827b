"""Curves prepared for a figure: cut out and aligned on an event ("rounds since the
switch"), averaged over pieces, the x spans of alternating phases (day and night), and
the rule that decides when a figure draws each seed."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from simfl.metrics.curves import Series, common_grid, step_values

#: a line of at most this many seeds draws each seed under its mean
FEW_SEEDS = 5


def since(s: Series, start: float, stop: float | None = None) -> Series:
    """The points of ``s`` with ``start <= x <= stop`` (``stop`` None: to the end), their
    x counted from ``start`` (x = 0 at the event)."""
    keep = (s.x >= start) & (s.x <= (math.inf if stop is None else stop))
    return Series(s.x[keep] - start, s.y[keep])


def since_each(s: Series, starts: Sequence[float], length: float) -> list[Series]:
    """One aligned piece of ``s`` per event in ``starts``: the ``length`` x-units after
    it, counted from it (a piece with no point is left out)."""
    pieces = [since(s, start, start + length) for start in starts]
    return [p for p in pieces if len(p.x)]


def mean_series(pieces: Sequence[Series]) -> Series:
    """The mean of ``pieces`` on their common grid (each a step function: its last
    point at or before x); empty when they share no x."""
    pieces = [p for p in pieces if len(p.x)]
    if not pieces:
        return Series(np.array([]), np.array([]))
    grid = common_grid(pieces)
    if grid.size == 0:
        return Series(grid, grid)
    return Series(grid, np.vstack([step_values(p.x, p.y, grid) for p in pieces]).mean(axis=0))


def phase_spans(x_max: float, length: float, every: float,
                start: float = 0.0) -> list[tuple[float, float]]:
    """The x spans ``[start + k every, start + k every + length]`` that begin before
    ``x_max`` (the last one cut at ``x_max``): for day/night phases of ``P`` rounds each,
    ``phase_spans(x_max, P, 2 P, start=P)`` gives the nights when day comes first."""
    if length <= 0 or every <= 0:
        raise ValueError(f"phase_spans: length {length} and every {every} must be > 0")
    spans, lo = [], float(start)
    while lo < x_max:
        spans.append((lo, min(lo + length, float(x_max))))
        lo += every
    return spans


def bimodal(values: Sequence[float]) -> bool:
    """Whether the seeds' values split into two groups: sorted, some gap between
    neighbours is wider than half their range, with at least 2 values on each side."""
    v = np.sort(np.asarray([x for x in values if math.isfinite(x)], dtype=float))
    if len(v) < 4 or v[-1] == v[0]:
        return False
    gaps = np.diff(v)
    k = int(np.argmax(gaps))
    return bool(gaps[k] > (v[-1] - v[0]) / 2 and 2 <= k + 1 <= len(v) - 2)


def draws_seeds(values: np.ndarray) -> bool:
    """A line (rows: its seeds on the common grid) draws each seed when it has at most
    :data:`FEW_SEEDS` of them or its seeds' last values are :func:`bimodal`."""
    return values.shape[0] <= FEW_SEEDS or bimodal(values[:, -1])
