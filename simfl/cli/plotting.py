"""``simfl plot``: a figure of run folders, or folders of runs, read from their files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from simfl.core.errors import SimflError


def cmd_plot(args: argparse.Namespace) -> int:
    from simfl.metrics.plot import plot_runs

    dirs = [Path(d) for d in args.dirs]
    missing = [str(d) for d in dirs if not d.is_dir()]
    if missing:
        raise SimflError(f"not a run directory: {', '.join(missing)}")
    out = Path(args.out) if args.out else Path(f"{args.metric}_vs_{args.x}.png")
    print(plot_runs(dirs, out, args.metric, args.x, unit=args.unit, band=args.band,
                    labels=args.label, target=args.target, force=args.force,
                    warn=lambda text: print(f"simfl plot: warning: {text}", file=sys.stderr)))
    return 0
