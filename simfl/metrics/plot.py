"""Plots read from run folders (never re-running anything): one line per group of runs
that differ only by seed, its mean with a band over seeds (see :mod:`simfl.metrics.curves`
for the grouping, the common grid and the bands)."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Callable, Sequence

from simfl.core.errors import ConfigError, OutputError
from simfl.metrics.curves import BANDS, X_AXES, build_lines
from simfl.metrics.grouping import group_by_seed, group_labels
from simfl.metrics.label_binding import bind_labels
from simfl.metrics.plot_style import (TIME_UNITS_S, legend_title, line_styles, marks,
                                      seed_display, time_unit)
from simfl.metrics.run_folders import find_runs_per_path, metric_table, read_run

#: characters per line of a legend label (longer ones wrap)
LABEL_WIDTH = 60


def x_label(x: str, unit: str | None) -> str:
    return f"simulated time ({unit})" if x == "time" else "rounds completed"


def y_label(metric: str, table: str) -> str:
    return f"test {metric}" if table == "evals" else f"{metric} (per round)"


def make_figure(paths: Sequence[Path], metric: str = "accuracy", x: str = "time",
                unit: str | None = None, band: str = "ci",
                labels: Sequence[str] | None = None, target: float | None = None,
                warn: Callable[[str], None] | None = None):
    """The figure of ``metric`` for the run folders (or folders of runs) ``paths``.

    Parameters
    ----------
    paths:
        Run folders, or folders searched for run folders (unfinished runs found there
        are left out, and ``warn`` is told).
    metric:
        A column of ``evals.csv`` (accuracy, loss, acc_class_k...) or of ``rounds.csv``
        (energy_j, n_received...).
    x, unit:
        ``"time"`` (in ``unit``: s, min, h or days; by default the one that suits the
        longest line, see :func:`~simfl.metrics.plot_style.time_unit`) or ``"round"``
        (rounds completed).
    band:
        ``"ci"`` (95% t-interval of the mean over seeds), ``"minmax"`` or ``"none"``;
        a line of fewer than three seeds draws each seed thinly instead of a band.
    labels:
        Legend labels: ``LINE=TEXT`` each, or plain texts bound to ``paths`` in order
        (see :mod:`simfl.metrics.label_binding`); default: the parameters that differ.
    target:
        A dashed horizontal line; default the runs' ``run.target_accuracy`` when the
        metric is accuracy.

    With ``ci`` bands the y axis spans the runs' own values and the targets (with a 5%
    margin): an interval wider than that (few seeds) is cut at the edge of the view.

    Returns
    -------
    matplotlib.figure.Figure
        A figure not registered with pyplot (nothing global is touched).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    if x not in X_AXES:
        raise ConfigError("--x", x, " or ".join(X_AXES))
    if band not in BANDS:
        raise ConfigError("--band", band, " or ".join(BANDS))
    if unit is not None and x != "time":
        raise ConfigError("--unit", unit, "no unit with --x round (units are for --x time)")
    if target is not None and not math.isfinite(target):
        raise ConfigError("--target", target, "a finite number")
    if unit is not None and unit not in TIME_UNITS_S:
        raise ConfigError("--unit", unit, " or ".join(TIME_UNITS_S))
    per_path, unfinished = find_runs_per_path(paths)
    run_dirs = [run for runs in per_path for run in runs]
    if unfinished and warn:
        names = ", ".join(str(p) for p in unfinished[:3]) + (" ..." if len(unfinished) > 3 else "")
        warn(f"left out {len(unfinished)} unfinished run(s) (no summary.json): {names}")
    if not run_dirs:
        raise ConfigError("DIR", [str(p) for p in paths], "at least one finished run folder")
    runs = [read_run(p) for p in run_dirs]
    table = metric_table(runs[0].path, metric)
    if labels:
        groups = group_by_seed(runs)
        labels = bind_labels([str(p) for p in paths], per_path, groups, group_labels(groups),
                             labels)
    lines = build_lines(runs, metric, x, band, labels)

    scale = 1.0
    if x == "time":
        unit = unit or time_unit(max(float(line.x.max()) for line in lines))
        scale = TIME_UNITS_S[unit]

    fig = Figure(figsize=(7.5, 4.5), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    sizes = [len(line.runs) for line in lines]
    for i, (line, style) in enumerate(zip(lines, line_styles(len(lines)))):
        label = line.label if len(set(sizes)) == 1 else f"{line.label} (n={len(line.runs)})"
        label = "\n".join(textwrap.wrap(label, LABEL_WIDTH, subsequent_indent="  ")) or label
        xs = line.x / scale
        if seed_display(len(line.runs), band) == "seeds" and line.values is not None:
            for row in line.values:  # each seed, thin and under the mean
                ax.plot(xs, row, drawstyle="steps-post", linewidth=0.7, alpha=0.45,
                        color=style.color, label="_seed")
        ax.plot(xs, line.mean, drawstyle="steps-post", linewidth=1.6, label=label,
                color=style.color, linestyle=style.linestyle, marker=style.marker,
                markersize=4, markevery=marks(len(xs), i, len(lines)))
        if line.lower is not None:
            ax.fill_between(xs, line.lower, line.upper, step="post", alpha=style.band_alpha,
                            color=style.color, linewidth=0)
        for change in line.session_changes:
            ax.axvline(change / scale, color=style.color, linestyle=":", linewidth=1.0,
                       alpha=0.7, label="session change" if not _has(ax, "session change")
                       else "_session change")
    targets = [target] if target is not None else (
        sorted({r.target_accuracy for line in lines for r in line.runs
                if r.target_accuracy is not None}) if metric == "accuracy" else [])
    for value in targets:
        ax.axhline(value, color="grey", linestyle="--", linewidth=0.9, label=f"target {value:g}")
    if any(line.lower is not None for line in lines):
        # the view spans the runs' values (and targets): a wider interval is cut at its edge
        lo = min([line.runs_range[0] for line in lines] + targets)
        hi = max([line.runs_range[1] for line in lines] + targets)
        margin = 0.05 * (hi - lo) or 0.05 * max(abs(hi), 1.0)
        ax.set_ylim(lo - margin, hi + margin)
    ax.set_xlabel(x_label(x, unit))
    ax.set_ylabel(y_label(metric, table))
    ax.set_title(f"{y_label(metric, table)} against {x_label(x, unit)}")
    ax.grid(True, alpha=0.3)
    if x == "round":
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    title = legend_title(sizes, band)
    ax.legend(fontsize=8, title=title, title_fontsize=8)
    fig.tight_layout()
    return fig


def _has(ax, label: str) -> bool:
    return any(artist.get_label() == label for artist in ax.get_lines())


def plot_runs(paths: Sequence[Path], out_png: Path, metric: str = "accuracy", x: str = "time",
              unit: str | None = None, band: str = "ci", labels: Sequence[str] | None = None,
              target: float | None = None, force: bool = False,
              warn: Callable[[str], None] | None = None) -> Path:
    """Draw :func:`make_figure` into ``out_png``; an existing file only with ``force``.

    The folder of ``out_png`` must exist: a mistyped folder is refused, never created.
    """
    out_png = Path(out_png)
    if not out_png.parent.is_dir():
        raise ConfigError("--out", str(out_png), f"a file in an existing folder "
                          f"({out_png.parent} is not one)")
    if out_png.exists() and not force:
        raise ConfigError("--out", str(out_png), "a file that does not exist yet (--force "
                          "overwrites it)")
    fig = make_figure(paths, metric, x, unit, band, labels, target, warn)
    try:
        fig.savefig(out_png)
    except OSError as err:
        raise OutputError(f"cannot write {out_png}: {err.strerror or err}") from None
    return out_png
