"""The report's figures: panels of curves (the mean over seeds in bold, each seed thin
where seeds are few or split in two, else a 95% band), optionally shaded phases and a
grid of small panels, and grouped bars of per-seed values.

Figures are small files: PNG at :data:`DPI` dots per inch (or SVG, by the path's suffix)
of :data:`PANEL_IN`-inch panels. Each label keeps its colour across the panels of one
figure. Curve helpers (aligned on an event, phase spans) live in :mod:`.aligned`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence, Union

import numpy as np

from simfl.metrics.curves import Series, band, common_grid, step_values
from simfl.metrics.seed_means import mark_empty

from .aligned import draws_seeds
from .campaigns import RunInfo
from .intervals import mean_ci

#: resolution of PNG figures, and a panel's width and height in inches
DPI = 80
PANEL_IN = (3.6, 2.7)


#: how the figures are drawn, for the report
HOW_TO_READ = """In the figures each line is a method's mean over seeds, drawn bold; under it each
seed is drawn thin when the line has at most 5 seeds or its seeds' last values split in
two (sorted, a gap between neighbours wider than half their range with at least 2 seeds
on each side), and the 95% t-band of the mean is shaded otherwise. "n" in the legend is
the number of seeds."""


@dataclass(frozen=True)
class Panel:
    """One subplot: its title, one list of per-seed series per label, x spans to shade
    (``shade_label`` names them in the legend) and an optional x label of its own."""

    title: str
    lines: Mapping[str, Sequence[Series]]
    shade: Sequence[tuple[float, float]] = ()
    shade_label: str = ""
    xlabel: str | None = None


PanelLike = Union[Panel, tuple[str, Mapping[str, Sequence[Series]]]]


def _figure(n: int, ncols: int | None) -> tuple[Any, int, int]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    ncols = max(1, min(ncols or n, n, 4 if ncols is None else n))
    nrows = math.ceil(n / ncols)
    fig = Figure(figsize=(PANEL_IN[0] * ncols, PANEL_IN[1] * nrows + 0.3), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig, nrows, ncols


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    extra = {"pil_kwargs": {"optimize": True}} if path.suffix == ".png" else {}
    fig.savefig(path, dpi=DPI, **extra)
    return path


def _draw_line(ax: Any, series: Sequence[Series], label: str, color: str) -> tuple[float, float]:
    """One label's mean (bold) with its seeds (thin) or band; the range of its values."""
    series = [s for s in series if len(s.x)]
    grid = common_grid(series) if series else np.array([])
    if grid.size == 0:
        return math.inf, -math.inf
    values = np.vstack([step_values(s.x, s.y, grid) for s in series])
    mean, lower, upper = band(values, "ci")
    if draws_seeds(values):
        for row in values:
            ax.plot(grid, row, drawstyle="steps-post", linewidth=0.6, alpha=0.45, color=color)
    elif lower is not None:
        ax.fill_between(grid, lower, upper, step="post", alpha=0.2, color=color, linewidth=0)
    ax.plot(grid, mean, drawstyle="steps-post", linewidth=2.0, color=color,
            label=f"{label} (n={len(series)})")
    return float(np.nanmin(values)), float(np.nanmax(values))


def plot_panels(path: Path, panels: Sequence[PanelLike], ylabel: str,
                xlabel: str = "rounds completed", *, ncols: int | None = None,
                sharey: bool = False) -> Path:
    """Write :func:`panels_figure` to ``path`` (``.png`` or ``.svg``)."""
    return _save(panels_figure(panels, ylabel, xlabel, ncols=ncols, sharey=sharey), path)


def panels_figure(panels: Sequence[PanelLike], ylabel: str, xlabel: str = "rounds completed",
                  *, ncols: int | None = None, sharey: bool = False) -> Any:
    """A figure of ``panels`` (a :class:`Panel` or a ``(title, lines)`` pair each).

    Each label's mean over its seeds is drawn bold on the seeds' common grid. Under it,
    each seed is drawn thin when the label has at most 5 seeds or its seeds' last values
    split in two (:func:`.aligned.bimodal`); otherwise the 95% t-band of the mean is
    shaded. The view spans the runs' own values. Panels are laid out ``ncols`` to a row
    (default: one row of up to 4); ``sharey`` gives them one y range. The legend is in
    the first panel when every panel has the same labels, else in each.
    """
    items = [p if isinstance(p, Panel) else Panel(*p) for p in panels]
    fig, nrows, ncols = _figure(len(items), ncols)
    labels = list(dict.fromkeys(label for p in items for label in p.lines))
    colors = {label: f"C{i % 10}" for i, label in enumerate(labels)}
    same = all(list(p.lines) == list(items[0].lines) for p in items)
    axes, lo, hi = [], math.inf, -math.inf
    for i, panel in enumerate(items):
        ax = fig.add_subplot(nrows, ncols, i + 1)
        axes.append(ax)
        for x0, x1 in panel.shade:
            ax.axvspan(x0, x1, color="0.6", alpha=0.18, linewidth=0,
                       label=panel.shade_label if (x0, x1) == tuple(panel.shade[0]) else None)
        p_lo, p_hi = math.inf, -math.inf
        for label, series in panel.lines.items():
            a, b = _draw_line(ax, series, label, colors[label])
            p_lo, p_hi = min(p_lo, a), max(p_hi, b)
        lo, hi = min(lo, p_lo), max(hi, p_hi)
        if math.isfinite(p_lo) and not sharey:
            _limits(ax, p_lo, p_hi)
        elif not math.isfinite(p_lo):  # nothing to draw: say so, not an empty ±0.05 axis
            mark_empty(ax, "no values: none of its runs\nrecorded this column")
        ax.set_title(panel.title, fontsize=8)
        ax.set_xlabel(panel.xlabel or xlabel, fontsize=7)
        if i % ncols == 0:
            ax.set_ylabel(ylabel, fontsize=7)
        ax.tick_params(labelsize=6)
        ax.grid(True, alpha=0.3)
        if (i == 0 or not same) and (panel.lines or panel.shade_label):
            ax.legend(fontsize=6)
    if sharey and math.isfinite(lo):
        for ax in axes:
            _limits(ax, lo, hi)
    return fig


def _limits(ax: Any, lo: float, hi: float) -> None:
    margin = 0.05 * (hi - lo) or 0.05 * max(abs(hi), 1.0)
    ax.set_ylim(lo - margin, hi + margin)


def plot_bars(path: Path, groups: Mapping[str, Mapping[str, Any]], ylabel: str,
              *, log: bool = False, title: str = "") -> Path:
    """Write :func:`bars_figure` to ``path``."""
    return _save(bars_figure(groups, ylabel, log=log, title=title), path)


def bars_figure(groups: Mapping[str, Mapping[str, Any]], ylabel: str, *, log: bool = False,
                title: str = "") -> Any:
    """Grouped bars: one group per key of ``groups`` (a setting), one bar per label in it
    (a method) at the mean of its per-seed values (a sequence, or seed -> value), with the
    95% t-interval as an error bar and each seed as a dot; ``log`` draws the y axis on a
    log scale, fitted to every positive bar and seed (a bar of 0 is marked "0")."""
    fig, _, _ = _figure(1, 1)
    fig.set_size_inches(max(PANEL_IN[0], 0.9 * len(groups) + 1.5), PANEL_IN[1] + 0.3)
    ax = fig.add_subplot(1, 1, 1)
    labels = list(dict.fromkeys(label for g in groups.values() for label in g))
    width = 0.8 / max(len(labels), 1)
    shown: list[float] = []  # positive means, seeds and interval ends: what a log axis fits
    zeros: list[float] = []  # x of the bars a log axis cannot draw (a mean <= 0)
    for j, label in enumerate(labels):
        for i, group in enumerate(groups.values()):
            found = group.get(label, ())
            values = list(found.values() if isinstance(found, Mapping) else found)
            ci = mean_ci(values)
            if ci.n == 0:
                continue
            x = i - 0.4 + width * (j + 0.5)
            err = [[ci.mean - ci.lo], [ci.hi - ci.mean]] if ci.n > 1 else None
            ax.bar(x, ci.mean, width, color=f"C{j % 10}", alpha=0.6, yerr=err, capsize=2,
                   label=label if i == 0 else None)
            ax.plot([x] * ci.n, [v for v in values if math.isfinite(v)], ".", color="k",
                    markersize=2)
            ends = [ci.lo, ci.hi] if ci.n > 1 else []
            shown += [v for v in [ci.mean, *values, *ends] if math.isfinite(v) and v > 0]
            if ci.mean <= 0:
                zeros.append(x)
    ax.set_xticks(range(len(groups)), list(groups), rotation=30, ha="right", fontsize=6)
    if not ax.patches:
        mark_empty(ax, "no values to draw")
    elif log:
        ax.set_yscale("log")
        if shown:  # every bar and seed inside the axis
            ax.set_ylim(min(shown) / 3, max(shown) * 3)
        for x in zeros:  # a bar of 0 has no height on a log axis: named at its place
            ax.annotate("0", (x, 0), xycoords=("data", "axes fraction"), xytext=(0, 2),
                        textcoords="offset points", ha="center", fontsize=6)
    ax.set_ylabel(ylabel, fontsize=7)
    ax.set_title(title, fontsize=8)
    ax.tick_params(labelsize=6)
    if ax.patches:  # beside the bars, never over them
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return fig


def series(run: RunInfo, column: str) -> Series:
    evals = run.evals()
    keep = np.isfinite(evals[column])
    return Series(evals["round"][keep], evals[column][keep])
