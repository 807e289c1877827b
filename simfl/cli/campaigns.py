"""``simfl sweep`` and ``simfl results``: run (or resume) a campaign of seeds times grid
points, and read a campaign's runs back as one table."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from simfl.plugins import warn_failed_plugins


def cmd_sweep(args: argparse.Namespace) -> int:
    from simfl.campaign import sweep

    warn_failed_plugins(args.command, sys.stderr.write)
    try:
        report = sweep(args.scenario, seeds=args.seeds, grid=args.grid, set=args.set,
                       out=args.out, jobs=args.jobs, engine=args.engine,
                       scheduler=args.scheduler, quiet=args.quiet,
                       command=["simfl", *args.argv], trust_code=args.trust_code)
    except KeyboardInterrupt:
        print("simfl sweep: interrupted: finished runs stay done, the others are pending; "
              "the same command resumes", file=sys.stderr)
        return 130
    print(dataclasses.replace(report, folder=shown_path(report.folder)).line())
    return 1 if report.failed else 0


def shown_path(path: Path) -> Path:
    """``path`` relative to the current folder when it lies below it, else absolute."""
    path = Path(path).absolute()
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def cmd_results(args: argparse.Namespace) -> int:
    from simfl.campaign.results import csv_table, select, table, text_table
    from simfl.metrics.rundir import write_atomic

    columns, rows = table(Path(args.campaign))
    if args.columns is not None:
        columns = select(columns, args.columns)
    if args.csv:
        write_atomic(Path(args.csv), csv_table(columns, rows))
        print(args.csv)
    else:
        sys.stdout.write(text_table(columns, rows, drop_empty=args.columns is None))
    return 0
