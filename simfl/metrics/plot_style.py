"""How the lines of a plot look, decided from the data before anything is drawn: the
unit of the time axis, how a line shows its seeds (a band, or each seed as a thin line
under the mean) and the styles that keep many lines and their bands apart.

Seeds. A 95% t-interval of the mean from two seeds multiplies their spread by
t(0.975, 1) = 12.7: it jumps between zero width (where the two seeds agree) and far
beyond the axis (where they do not). A line of fewer than :data:`MIN_BAND_RUNS` runs
therefore draws each run thinly under its mean and has no band, whatever the band kind.

Many lines. From :data:`MANY_LINES` lines on, each line gets its own dash pattern and
marker besides its colour, and bands are fainter, so that overlapping bands still show
the lines through them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

#: seconds per unit of the time axis
TIME_UNITS_S = {"s": 1.0, "min": 60.0, "h": 3600.0, "days": 86400.0}
#: the longest simulated time (s) shown in each unit before the next larger one is taken
UNIT_LIMITS_S = (("s", 600.0), ("min", 3 * 3600.0), ("h", 72 * 3600.0))
#: the fewest runs of a line that get a band; fewer are drawn one by one
MIN_BAND_RUNS = 3
#: the number of lines from which lines differ in dash and marker and bands are fainter
MANY_LINES = 4
#: band opacity with fewer lines, and with many
BAND_ALPHA, MANY_BAND_ALPHA = 0.2, 0.1
#: markers drawn per line (about), when lines carry markers
MARKS_PER_LINE = 8
BAND_WORDS = {"ci": "95% CI of the mean", "minmax": "min to max", "none": ""}

_DASHES = ("-", "--", "-.", ":")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


@dataclass(frozen=True)
class LineStyle:
    """A line's look: its colour, dash pattern, marker (None: none) and band opacity."""

    color: str
    linestyle: str
    marker: str | None
    band_alpha: float


def time_unit(max_s: float) -> str:
    """The unit of a time axis reaching ``max_s`` seconds: s up to 10 min, min up to
    3 h, h up to 3 days, days beyond."""
    for unit, limit_s in UNIT_LIMITS_S:
        if max_s <= limit_s:
            return unit
    return "days"


def seed_display(n_runs: int, band_kind: str) -> str:
    """How a line of ``n_runs`` runs shows them: ``"band"`` (a band around the mean),
    ``"seeds"`` (each run thinly under the mean, no band) or ``"mean"`` (the mean
    alone: one run, or ``band_kind`` ``"none"``)."""
    if n_runs < 2 or band_kind == "none":
        return "mean"
    return "band" if n_runs >= MIN_BAND_RUNS else "seeds"


def line_styles(n_lines: int) -> list[LineStyle]:
    """The look of each of ``n_lines`` lines: colours in turn; from :data:`MANY_LINES`
    on, dash patterns and markers in turn too and fainter bands."""
    many = n_lines >= MANY_LINES
    return [LineStyle(f"C{i % 10}", _DASHES[i % len(_DASHES)] if many else "-",
                      _MARKERS[i % len(_MARKERS)] if many else None,
                      MANY_BAND_ALPHA if many else BAND_ALPHA) for i in range(n_lines)]


def marks(n_points: int, index: int, n_lines: int) -> tuple[int, int]:
    """``markevery`` of line ``index``: about :data:`MARKS_PER_LINE` marks, each line's
    shifted so that marks of lines that overlap do not hide each other."""
    step = max(1, n_points // MARKS_PER_LINE)
    return (index * step // max(n_lines, 1)) % step, step


def legend_title(sizes: Sequence[int], band_kind: str) -> str | None:
    """The legend's title saying what a line is, from its lines' numbers of runs."""
    n = max(sizes, default=1)
    if n < 2:
        return None
    shown = {seed_display(size, band_kind) for size in sizes}
    parts = [f"mean of {n} seeds" if len(set(sizes)) == 1 else "mean over seeds"]
    if "band" in shown:
        parts.append(f"band: {BAND_WORDS[band_kind]}")
    if "seeds" in shown:
        parts.append("thin lines: each seed" + ("" if shown == {"seeds"} else
                                                f" (lines of < {MIN_BAND_RUNS} seeds)"))
    return ", ".join(parts)
