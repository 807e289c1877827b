"""A study's summary figure: one value per run, the mean over seeds at each x with its band.

Studies that sweep a grid (``scenarios/cell_edge.py``, ``scenarios/wifi_vs_cellular.py``)
draw, for each line, the mean over seeds of a per-run value (round length, time to
target) at each x. Like ``simfl plot``, a point with fewer than :data:`MIN_BAND_SEEDS`
values gets no band (a t-band over two seeds spans most of the axis): each seed's value
is drawn as a cross instead.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from simfl.metrics.curves import t_quantile_975

#: fewer seeds than this at a point: no band, each seed's value as a cross
MIN_BAND_SEEDS = 3


def mean_band(values: Sequence[float]) -> tuple[float, float]:
    """The mean of ``values`` and the half-width of its 95 % t-interval (0 for one value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, 0.0
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return mean, t_quantile_975(n - 1) * sd / math.sqrt(n)


def plot_seed_means(ax: Any, points: dict[float, list[float]], style: str,
                    label: str) -> list[float]:
    """Draw one line on the matplotlib axes ``ax``: at each x of ``points`` (x -> the
    seeds' values; an x without values is skipped) the mean, a 95 % t-band where there
    are at least :data:`MIN_BAND_SEEDS` values, and each value as a cross where fewer.
    Returns the x's skipped, for a note that says why (:func:`note_missing`)."""
    xs, means, halves, few = [], [], [], []
    skipped = []
    for x in sorted(points):
        values = points[x]
        if not values:
            skipped.append(x)
            continue
        mean, half = mean_band(values)
        xs.append(x)
        means.append(mean)
        halves.append(half if len(values) >= MIN_BAND_SEEDS else math.nan)
        if len(values) < MIN_BAND_SEEDS:
            few += [(x, v) for v in values]
    line, = ax.plot(xs, means, style, label=label)
    ax.fill_between(xs, [m - h for m, h in zip(means, halves)],
                    [m + h for m, h in zip(means, halves)],
                    color=line.get_color(), alpha=0.15, linewidth=0)
    if few:
        ax.plot(*zip(*few), "x", color=line.get_color(), markersize=5)
    return skipped


def note_missing(ax: Any, lines: Sequence[str]) -> None:
    """Say inside the panel ``ax`` which points are missing and why (small text in a
    box at its lower right), so the figure stands without its caption."""
    if lines:
        ax.text(0.98, 0.03, "\n".join(lines), transform=ax.transAxes, ha="right",
                va="bottom", fontsize=7, color="0.25",
                bbox={"boxstyle": "round", "facecolor": "white", "edgecolor": "0.7",
                      "alpha": 0.9})


def mark_empty(ax: Any, text: str) -> None:
    """A panel with nothing to draw: ``text`` in its middle instead of an empty axis with
    a meaningless scale."""
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=9,
            color="0.3", wrap=True)
    ax.set_yticks([])


def note_unreached(ax: Any, missing: Sequence[str], n_points: int, target: float,
                   rounds: int) -> None:
    """A time-to-accuracy panel's missing points: every point missing marks the panel
    empty (``target`` reached by no run in ``rounds``); some missing are listed in it."""
    if missing and len(missing) == n_points:
        mark_empty(ax, f"{target:.0%} accuracy not reached\nin {rounds} rounds by any run")
    elif missing:
        note_missing(ax, [f"not reached in {rounds} rounds by any seed:", *missing])
