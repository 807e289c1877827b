"""A grid study's command line: one campaign over a grid and seeds, then its finished rows.

Study scripts (``scenarios/cell_edge.py``, ``scenarios/wifi_vs_cellular.py``) share the
same options: ``--out`` (the campaign folder), ``--seeds``, ``--jobs`` and ``--quick`` (a
smaller grid, three rounds, one seed, for a look at the machinery). A second call runs
only what is missing.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Sequence

from simfl.campaign.coordinator import sweep
from simfl.campaign.results import table
from simfl.core.config import Scenario


def run_study(scenario: Scenario, argv: Sequence[str] | None, *, description: str,
              grid: dict[str, list[Any]], quick_grid: dict[str, list[Any]], seeds: str,
              quick_help: str) -> tuple[Path, list[dict[str, Any]]]:
    """Parse ``argv``, run the campaign and return its folder and its finished runs' rows
    (:func:`simfl.campaign.results.table`)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", type=Path, required=True, help="the campaign folder")
    parser.add_argument("--seeds", default=seeds, help=f"A-B or a comma list (default {seeds})")
    parser.add_argument("--jobs", type=int, default=1, help="runs at once (default 1)")
    parser.add_argument("--quick", action="store_true", help=quick_help)
    args = parser.parse_args(argv)
    sweep(scenario, seeds="1" if args.quick else args.seeds,
          grid=quick_grid if args.quick else grid,
          set=["run.rounds=3"] if args.quick else [], out=args.out, jobs=args.jobs)
    _, rows = table(args.out)
    return args.out, [row for row in rows if row["status"] == "done"]
