"""The reproduction report: each paper's claim checked on its study's campaign folder.

Reads campaign folders written by the studies (``python -m studies.NAME``): their
``study.json`` and run folders (``config.json``, ``evals.csv``, ``summary.json``, and where
a study wrote them ``events.csv`` and ``client_labels.json``). It never runs a simulation.

Usage::

    python analysis/report.py [CAMPAIGN ...] --out DIR

regenerates, in the report folder ``DIR``, the parts of the studies whose campaign folders
are given (each study's section ``DIR/sections/KEY.md`` and verdict rows
``DIR/sections/KEY.json``, its figures ``DIR/figures/*.png``, its rows of
``DIR/comparisons.csv``, its runs ``DIR/results/KEY.csv`` and raw claim metrics
``DIR/results/KEY_claims.csv``), keeps the other studies' parts already in ``DIR``, and
assembles ``DIR/report.md`` from all of them. So one study is regenerated from its own
campaign folder alone; with no campaign the report is only reassembled.

Statistics. A number is the mean over seeds with its 95% confidence interval,
mean ± t(0.975, n-1) s / sqrt(n) (s: the sample standard deviation; no interval for one
seed). A *comparison* of a claimed-better arm A with an arm B pairs their runs by seed
and takes the differences d_s in the claimed direction (A - B when higher is better,
B - A when lower is). The comparisons of one claim are one family: Holm's step-down
procedure sorts their paired t-tests' two-sided p-values and tests the j-th smallest of
m at alpha_j = 0.05 / (m - j + 1), stopping at the first that is not rejected (it and
the later ones keep its alpha_j). Each comparison's interval is the t-interval of the
mean of d at 1 - alpha_j:

* **reproduced**: the interval lies above 0 (the claimed side);
* **contradicted**: it lies below 0;
* **inconclusive**: it contains 0, or fewer than 2 seeds are paired;
* **not assessed**: no seed has runs on both sides.

A claim is reproduced when all its comparisons are, contradicted when any is, and
inconclusive otherwise. Each comparison also states the paper's effect (where given)
and the smallest effect its seeds detect with 80% power at alpha_j,
(t(1 - alpha_j/2, n-1) + t(0.8, n-1)) s / sqrt(n). The report's own "How the verdicts
are decided" (``reproduction.verdicts.RULE``) says the same.

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
from reproduction.sections import Claim, Section, verdict_block  # noqa: E402
from reproduction.tables import comparison_table, md_table  # noqa: E402
from reproduction.intervals import (holm_levels, min_detectable,  # noqa: E402
                                    paired_p_value)
from reproduction.verdicts import (CONTRADICTED, INCONCLUSIVE, NOT_ASSESSED,  # noqa: E402
                                   NOT_REPRODUCED, PARTLY, REPRODUCED, RULE, Comparison,
                                   Interval, compare, holm, mean_ci, overall)

#: the report's names, for callers that load this script (tests, python -m studies)
__all__ = [
    "LATE_SHARE", "STUDY_FILE", "Campaign", "RunInfo", "by_seed", "late_mean", "read_campaign",
    "write_report", "plot_panels", "series", "SECTIONS", "rare_class", "rare_series",
    "client_accuracies", "tail_mean", "invite_variance", "diurnal_swing", "example1_limit",
    "example1_objective", "switch_scores", "Claim", "Section", "verdict_block", "comparison_table", "md_table",
    "holm_levels", "min_detectable", "paired_p_value", "CONTRADICTED", "INCONCLUSIVE",
    "NOT_ASSESSED", "NOT_REPRODUCED", "PARTLY", "REPRODUCED", "RULE", "Comparison", "Interval",
    "compare", "holm", "mean_ci", "overall", "main",
]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Write the reproduction report from the studies' "
                                "campaign folders (nothing is re-run).")
    p.add_argument("campaigns", nargs="*", type=Path,
                   help="campaign folders of the studies to regenerate (none: reassemble)")
    p.add_argument("--out", type=Path, required=True,
                   help="report folder: report.md, figures/, sections/, results/, "
                   "comparisons.csv (the other studies' parts there are kept)")
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
