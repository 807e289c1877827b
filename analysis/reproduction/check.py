"""Recompute every verdict of ``comparisons.csv`` from its per-seed differences.

A reader's check, independent of the report's own statistics: for each row it takes the
paired differences, recomputes with SciPy the mean, the paired t-test's p-value, Holm's
level within the claim, the t-interval at that level and the smallest detectable effect,
and applies the verdict rule (:func:`.verdicts.decide`) to them; every number and
verdict must match the row's. Prints one line per mismatch and a summary; exit status 1
when anything differs::

    python -m analysis.reproduction.check                     # docs/reproduction/comparisons.csv
    python -m analysis.reproduction.check path/to/comparisons.csv
"""

from __future__ import annotations

import csv
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy import stats

if __package__ in (None, ""):  # run as a file
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from reproduction.intervals import POWER, Interval
    from reproduction.verdicts import ALPHA, NOT_TESTED, decide
else:
    from .intervals import POWER, Interval
    from .verdicts import ALPHA, NOT_TESTED, decide

DEFAULT = Path(__file__).resolve().parents[2] / "docs" / "reproduction" / "comparisons.csv"
#: relative tolerance of the recomputed numbers (the file keeps 6 significant digits)
RTOL = 2e-5


def differences(cell: str) -> list[float]:
    """The per-seed differences of a row: ``seed:value;...`` (or bare values)."""
    return [float(item.split(":")[-1]) for item in cell.split(";") if item]


def recompute(rows: list[dict[str, str]]) -> list[dict[str, float | str]]:
    """The recomputed statistics and verdict of each row, in the rows' order."""
    by_claim: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        by_claim[row["paper"], row["claim"]].append(i)
    levels: dict[int, float] = {}
    p_values = [_p_value(differences(r["per_seed_differences"])) for r in rows]
    for members in by_claim.values():  # Holm's step-down within each claim
        tested = sorted((i for i in members if math.isfinite(p_values[i])),
                        key=lambda i: p_values[i])
        alpha, stopped = ALPHA, False
        for j, i in enumerate(tested):
            if not stopped:
                alpha = ALPHA / (len(tested) - j)
                stopped = p_values[i] > alpha
            levels[i] = alpha
    out = []
    for i, row in enumerate(rows):
        d = np.asarray(differences(row["per_seed_differences"]))
        alpha = levels.get(i, ALPHA)
        n, mean = len(d), float(d.mean()) if len(d) else math.nan
        if n >= 2:
            se = float(d.std(ddof=1)) / math.sqrt(n)
            half = float(stats.t.ppf(1 - alpha / 2, n - 1)) * se
            mde = (float(stats.t.ppf(1 - alpha / 2, n - 1)) + float(stats.t.ppf(POWER, n - 1))) * se
        else:
            half = mde = math.nan
        paper = float(row["paper_effect"]) if row["paper_effect"] else None
        verdict = decide(Interval(mean, mean - half, mean + half, n, 1 - alpha), paper, mde)
        if row["verdict"] == NOT_TESTED:  # the setting's judgement, stated in the report
            verdict = NOT_TESTED
        out.append({"effect": mean, "lo": mean - half, "hi": mean + half, "level": 1 - alpha,
                    "p_value": p_values[i], "min_detectable": mde, "verdict": verdict})
    return out


def _p_value(d: list[float]) -> float:
    if len(d) < 2:
        return math.nan
    if np.std(d, ddof=1) == 0:
        return 0.0 if np.mean(d) != 0 else 1.0
    return float(stats.ttest_1samp(d, 0.0).pvalue)


def mismatches(path: Path) -> tuple[int, list[str]]:
    """The number of rows of ``path`` and one line per number or verdict that differs."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    found = []
    for row, again in zip(rows, recompute(rows)):
        for key, value in again.items():
            if key == "verdict":
                if value != row[key]:
                    found.append(f"{row['paper']} | {row['comparison']}: verdict "
                                 f"{row[key]!r}, recomputed {value!r}")
                continue
            written = float(row[key]) if row[key] else math.nan
            same = (math.isnan(written) and math.isnan(value)) or math.isclose(
                written, value, rel_tol=RTOL, abs_tol=1e-9)
            if not same:
                found.append(f"{row['paper']} | {row['comparison']}: {key} {written:.6g}, "
                             f"recomputed {value:.6g}")
    return len(rows), found


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else DEFAULT
    n, found = mismatches(path)
    for line in found:
        print(line)
    print(f"{path}: {n} comparisons, {len(found)} mismatches")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
