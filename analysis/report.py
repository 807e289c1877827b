"""The reproduction report: each paper's claim checked on its study's campaign folder.

Reads campaign folders written by the studies (``python -m studies.NAME``): their
``study.json`` and run folders (``config.json``, ``evals.csv``, ``summary.json``, and where
a study wrote them ``events.csv`` and ``client_labels.json``). It never runs a simulation.

Usage::

    python analysis/report.py CAMPAIGN [CAMPAIGN ...] --out DIR

writes ``DIR/report.md`` and its figures ``DIR/figures/*.png``.

Statistics. A number is the mean over seeds with its 95% confidence interval,
mean ± t(0.975, n-1) s / sqrt(n) (s: the sample standard deviation; no interval for one
seed). A *comparison* of a claimed-better arm A with an arm B pairs their runs by seed
and takes the differences d_s in the claimed direction (A - B when higher is better,
B - A when lower is); the rule:

* **reproduced**: at least 2 paired seeds, and the 95% interval of the mean of d lies
  above 0 (a paired t-test, two-sided at 5%, on the claimed side). Two arms whose own
  intervals do not overlap always pass it (the paired interval is never wider than the
  two half-widths added);
* **partly**: the mean of d is above 0 but neither interval condition holds;
* **not reproduced**: the mean of d is 0 or on the wrong side.

A claim made of several comparisons (one per setting or per baseline) is reproduced
when all of them are, not reproduced when none holds even in the mean, and partly
otherwise.

This script is the command line; the report's parts (statistics, campaign reading,
tables, figures, one section per paper) live in the package ``analysis/reproduction/``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from simfl.core.errors import SimflError

# the report's parts live in the package beside this script (analysis/reproduction)
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from reproduction.campaigns import (LATE_SHARE, STUDY_FILE, Campaign,  # noqa: E402
                                    RunInfo, by_seed, late_mean, read_campaign)
from reproduction.document import write_report  # noqa: E402
from reproduction.figures import plot_panels, series  # noqa: E402
from reproduction.papers import SECTIONS  # noqa: E402
from reproduction.papers.cvar import rare_class, rare_series  # noqa: E402
from reproduction.papers.fedar import client_accuracies, tail_mean  # noqa: E402
from reproduction.papers.fedgs import invite_variance  # noqa: E402
from reproduction.papers.fedlaavg import (diurnal_swing, example1_limit,  # noqa: E402
                                          example1_objective)
from reproduction.papers.warm_start import switch_scores  # noqa: E402
from reproduction.sections import Section  # noqa: E402
from reproduction.tables import comparison_table, md_table  # noqa: E402
from reproduction.verdicts import (NOT_ASSESSED, NOT_REPRODUCED, PARTLY,  # noqa: E402
                                   REPRODUCED, RULE, Comparison, Interval, compare,
                                   mean_ci, overall)

#: the report's names, for callers that load this script (tests, python -m studies)
__all__ = [
    "LATE_SHARE", "STUDY_FILE", "Campaign", "RunInfo", "by_seed", "late_mean", "read_campaign",
    "write_report", "plot_panels", "series", "SECTIONS", "rare_class", "rare_series",
    "client_accuracies", "tail_mean", "invite_variance", "diurnal_swing", "example1_limit",
    "example1_objective", "switch_scores", "Section", "comparison_table", "md_table",
    "NOT_ASSESSED", "NOT_REPRODUCED", "PARTLY", "REPRODUCED", "RULE", "Comparison", "Interval",
    "compare", "mean_ci", "overall", "main",
]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Write the reproduction report from the studies' "
                                "campaign folders (nothing is re-run).")
    p.add_argument("campaigns", nargs="+", type=Path, help="campaign folders of the studies")
    p.add_argument("--out", type=Path, required=True, help="folder for report.md and figures/")
    args = p.parse_args(argv)
    try:
        path = write_report(args.campaigns, args.out)
    except SimflError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
