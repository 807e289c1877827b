"""The report's figures: one panel per setting, mean over seeds with its 95% band per arm,
and the evaluation series they are drawn from."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np

from simfl.metrics.curves import Series, band, common_grid, step_values

from .campaigns import RunInfo


def plot_panels(path: Path, panels: Sequence[tuple[str, dict[str, list[Series]]]],
                ylabel: str, xlabel: str = "rounds completed") -> Path:
    """One subplot per panel, one line per label: mean over seeds with a 95% CI band (the
    view spans the runs' own values; a wider band, as with 2 seeds, is cut at its edge)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4.2 * len(panels), 3.6), dpi=110)
    FigureCanvasAgg(fig)
    for i, (title, lines) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), i + 1)
        lo, hi = math.inf, -math.inf  # the runs' own values: a wider band is cut at the edge
        for label, series in lines.items():
            series = [s for s in series if len(s.x)]
            if not series:
                continue
            grid = common_grid(series)
            if grid.size == 0:
                continue
            values = np.vstack([step_values(s.x, s.y, grid) for s in series])
            lo, hi = min(lo, float(values.min())), max(hi, float(values.max()))
            mean, lower, upper = band(values, "ci")
            (drawn,) = ax.plot(grid, mean, drawstyle="steps-post", linewidth=1.3,
                               label=f"{label} (n={len(series)})")
            if lower is not None:
                ax.fill_between(grid, lower, upper, step="post", alpha=0.18,
                                color=drawn.get_color(), linewidth=0)
        if math.isfinite(lo):
            margin = 0.05 * (hi - lo) or 0.05 * max(abs(hi), 1.0)
            ax.set_ylim(lo - margin, hi + margin)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path


def series(run: RunInfo, column: str) -> Series:
    evals = run.evals()
    keep = np.isfinite(evals[column])
    return Series(evals["round"][keep], evals[column][keep])
