"""A campaign's results as one tidy table: one row per run, its grid values and seed as
columns next to its status and summary metrics."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

from simfl.campaign.index import CampaignIndex
from simfl.core.errors import ConfigError

#: summary metrics shown first, in this order (any other number in summary.json follows)
METRICS = ("final_accuracy", "best_accuracy", "time_to_target_s", "rounds", "sim_time_s",
           "wall_time_s", "trained_updates", "aggregated_updates", "energy_j")


def _lookup(tree: dict[str, Any], key: str) -> Any:
    node: Any = tree
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def table(folder: str | Path) -> tuple[list[str], list[dict[str, Any]]]:
    """The columns and rows of the campaign in ``folder``.

    A grid key a run was not swept over (the grid grew later) shows the value its
    resolved scenario had.
    """
    index = CampaignIndex(Path(folder))
    try:
        keys, rows = index.grid_keys(), index.rows()
    finally:
        index.close()
    extra = sorted({k for r in rows for k, v in (r.summary or {}).items()
                    if k not in METRICS and isinstance(v, (int, float)) and not isinstance(v, bool)})
    columns = ["run", *keys, "seed", "status", *METRICS, *extra, "error"]
    out = []
    for r in rows:
        summary = r.summary or {}
        row: dict[str, Any] = {"run": r.folder}
        for key in keys:
            row[key] = r.params[key] if key in r.params else _lookup(r.scenario, key)
        row["seed"] = r.scenario.get("seed", r.params.get("seed"))
        row["status"] = r.status
        for key in (*METRICS, *extra):
            row[key] = summary.get(key)
        if row["wall_time_s"] is None:
            row["wall_time_s"] = r.wall_time_s
        row["error"] = r.error
        out.append(row)
    return columns, out


def results(folder: str | Path):
    """The campaign's table: a pandas DataFrame when pandas is installed, else a list of
    dicts (one per run)."""
    columns, rows = table(folder)
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows, columns=columns)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}" if math.isfinite(value) else str(value)
    if isinstance(value, (list, dict)):
        import json

        return json.dumps(value, separators=(",", ":"))
    return str(value)


def select(columns: list[str], wanted: str) -> list[str]:
    """The columns named in ``wanted`` (``"a,b,c"``), in its order; an unknown name is a
    :class:`ConfigError` listing the campaign's columns."""
    chosen = list(dict.fromkeys(name.strip() for name in wanted.split(",") if name.strip()))
    unknown = [name for name in chosen if name not in columns]
    if unknown or not chosen:
        raise ConfigError("--columns", unknown[0] if unknown else wanted,
                          f"comma-separated columns of this campaign: {', '.join(columns)}")
    return chosen


def text_table(columns: list[str], rows: list[dict[str, Any]], drop_empty: bool = True) -> str:
    """Aligned text: numbers to the right, words to the left; an empty column is left out
    (unless ``drop_empty`` is false: the columns were asked for by name)."""
    shown = [c for c in columns if not drop_empty or c in ("run", "status")
             or any(r.get(c) is not None for r in rows)]
    cells = [[_cell(r.get(c)) for c in shown] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(shown)]
    numeric = [all(isinstance(r.get(c), (int, float)) or r.get(c) is None for r in rows)
               for c in shown]
    lines = []
    for row in [shown, *cells]:
        lines.append("  ".join(v.rjust(w) if num else v.ljust(w)
                               for v, w, num in zip(row, widths, numeric)).rstrip())
    return "\n".join(lines) + "\n"


def csv_table(columns: list[str], rows: list[dict[str, Any]]) -> str:
    """CSV with full precision (empty cells for missing values)."""
    import json

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for r in rows:
        writer.writerow(["" if r.get(c) is None else
                         json.dumps(r[c]) if isinstance(r[c], (list, dict)) else
                         repr(r[c]) if isinstance(r[c], float) else r[c] for c in columns])
    return buffer.getvalue()
