"""Recompute every comparison of ``comparisons.csv`` from the committed data, independently
of the report's code.

A reader's check. For each study it reads the raw claim metrics
``results/STUDY_claims.csv`` beside ``comparisons.csv`` (each comparison's claim metric
of the claimed-better and the other arm, per seed), pairs them by seed, takes the
differences in the claimed direction, and recomputes with SciPy the mean, the paired
t-test's p-value, Holm's level within the claim, the t-interval at that level, the
smallest detectable effect and the verdict (the rule of the report's "How the verdicts
are decided", written again here). Every number, the per-seed differences and the
verdict must match the row's. A study whose raw claim metrics are not committed is
checked the old way, from the row's own ``per_seed_differences``, and the check says
so. Prints one line per study, one per mismatch and a summary; exit status 1 when
anything differs::

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

DEFAULT = Path(__file__).resolve().parents[2] / "docs" / "reproduction" / "comparisons.csv"
#: relative tolerance of the recomputed numbers (the file keeps 6 significant digits)
RTOL = 2e-5
#: the rule's family-wise level, power of the smallest detectable effect, and the
#: fraction of the paper's effect an interval must clear to reproduce it
ALPHA, POWER, FRACTION = 0.05, 0.8, 0.5
#: the verdicts a comparison can get
REPRODUCED, SMALLER, CONTRADICTED, INCONCLUSIVE, NOT_TESTED, NOT_ASSESSED = (
    "reproduced", "smaller than the paper's", "contradicted", "inconclusive", "not tested",
    "not assessed")
#: where a study's raw claim metrics are, relative to comparisons.csv's folder
CLAIMS = "results/{study}_claims.csv"

Paired = list[tuple[str, float]]  # (seed, difference in the claimed direction)


def differences(cell: str) -> list[float]:
    """The per-seed differences of a row: ``seed:value;...`` (or bare values)."""
    return [float(item.split(":")[-1]) for item in cell.split(";") if item]


def _labelled(cell: str) -> Paired:
    return [(item.rsplit(":", 1)[0] if ":" in item else "", float(item.rsplit(":", 1)[-1]))
            for item in cell.split(";") if item]


def _seed_key(seed: str) -> tuple[int, float | str]:
    try:
        return 0, float(seed)
    except ValueError:
        return 1, seed


def raw_pairs(path: Path) -> dict[tuple[str, str], Paired]:
    """Each comparison's (claim, comparison) paired differences from a raw claim metrics
    file: the seeds with a value on both sides, in numeric seed order, ``better - other``
    (``other - better`` where lower is better)."""
    found: dict[tuple[str, str], Paired] = defaultdict(list)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["claim"], row["comparison"])
            found.setdefault(key, [])
            if not row["better"] or not row["other"]:
                continue
            better, other = float(row["better"]), float(row["other"])
            if not (math.isfinite(better) and math.isfinite(other)):
                continue
            sign = 1.0 if row["higher_is_better"] == "true" else -1.0
            found[key].append((row["seed"], sign * (better - other)))
    return {k: sorted(v, key=lambda item: _seed_key(item[0])) for k, v in found.items()}


def _p_value(d: np.ndarray) -> float:
    if len(d) < 2:
        return math.nan
    if np.std(d, ddof=1) == 0:
        return 0.0 if np.mean(d) != 0 else 1.0
    return float(stats.ttest_1samp(d, 0.0).pvalue)


def rule(n: int, lo: float, hi: float, paper: float | None, mde: float) -> str:
    """The verdict of one comparison from its corrected interval ``[lo, hi]`` over ``n``
    paired seeds, the paper's effect and the smallest detectable effect."""
    if n == 0:
        return NOT_ASSESSED
    if n < 2:
        return INCONCLUSIVE
    if hi < 0:
        return CONTRADICTED
    if paper is None or paper <= 0:
        return REPRODUCED if lo > 0 else INCONCLUSIVE
    if lo > 0:
        return REPRODUCED if hi >= paper or lo >= FRACTION * paper else SMALLER
    if not mde <= paper:
        return INCONCLUSIVE
    return SMALLER if hi < paper else INCONCLUSIVE


def recompute(rows: list[dict[str, str]],
              paired: list[list[float]] | None = None) -> list[dict[str, float | str]]:
    """The recomputed statistics and verdict of each row, in the rows' order, from the
    per-seed differences ``paired`` (default: the rows' own)."""
    if paired is None:
        paired = [differences(r["per_seed_differences"]) for r in rows]
    by_claim: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        by_claim[row.get("study", ""), row["paper"], row["claim"]].append(i)
    p_values = [_p_value(np.asarray(d)) for d in paired]
    levels: dict[int, float] = {}
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
        d = np.asarray(paired[i], dtype=float)
        alpha = levels.get(i, ALPHA)
        n, mean = len(d), float(d.mean()) if len(d) else math.nan
        if n >= 2:
            se = float(d.std(ddof=1)) / math.sqrt(n)
            half = float(stats.t.ppf(1 - alpha / 2, n - 1)) * se
            mde = (float(stats.t.ppf(1 - alpha / 2, n - 1)) + float(stats.t.ppf(POWER, n - 1))) * se
        else:
            half = mde = math.nan
        paper = float(row["paper_effect"]) if row["paper_effect"] else None
        verdict = rule(n, mean - half, mean + half, paper, mde)
        if row["verdict"] == NOT_TESTED:  # the setting's judgement, stated in the report
            verdict = NOT_TESTED
        out.append({"paired_seeds": float(n), "effect": mean, "lo": mean - half,
                    "hi": mean + half, "level": 1 - alpha, "p_value": p_values[i],
                    "min_detectable": mde, "verdict": verdict})
    return out


def _same(written: float, value: float) -> bool:
    return (math.isnan(written) and math.isnan(value)) or math.isclose(
        written, value, rel_tol=RTOL, abs_tol=1e-9)


def check(path: Path) -> tuple[int, list[str], dict[str, str]]:
    """The number of rows of ``path``, one line per number or verdict that differs, and
    per study where its differences came from (its raw claim metrics, or its rows)."""
    path = Path(path)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    found: list[str] = []
    sources: dict[str, str] = {}
    raw: dict[str, dict[tuple[str, str], Paired]] = {}
    for study in dict.fromkeys(r.get("study", "") for r in rows):
        claims = path.parent / CLAIMS.format(study=study)
        if study and claims.is_file():
            raw[study] = raw_pairs(claims)
            sources[study] = f"recomputed from its raw claim metrics ({CLAIMS.format(study=study)})"
        else:
            sources[study] = (f"no raw claim metrics ({CLAIMS.format(study=study)} is absent): "
                              "checked from its rows' per_seed_differences")
    paired = []
    for row in rows:
        where = f"{row['paper']} | {row['comparison']}"
        own = _labelled(row["per_seed_differences"])
        study = row.get("study", "")
        if study not in raw:
            paired.append([d for _, d in own])
            continue
        pairs = raw[study].pop((row["claim"], row["comparison"]), None)
        if pairs is None:
            found.append(f"{where}: not in {CLAIMS.format(study=study)}")
            pairs = []
        if [s for s, _ in own] != [s for s, _ in pairs] or not all(
                _same(a, b) for (_, a), (_, b) in zip(own, pairs)):
            found.append(f"{where}: per_seed_differences {row['per_seed_differences']!r}, "
                         "recomputed " + ";".join(f"{s}:{d:.6g}" for s, d in pairs))
        paired.append([d for _, d in pairs])
    for study, left in raw.items():
        found += [f"{study} | {comparison}: in {CLAIMS.format(study=study)} but not in "
                  f"{path.name}" for _, comparison in left]
    for row, again in zip(rows, recompute(rows, paired)):
        for key, value in again.items():
            if key == "verdict":
                if value != row[key]:
                    found.append(f"{row['paper']} | {row['comparison']}: verdict "
                                 f"{row[key]!r}, recomputed {value!r}")
                continue
            assert isinstance(value, float)
            written = float(row[key]) if row[key] else math.nan
            if not _same(written, value):
                found.append(f"{row['paper']} | {row['comparison']}: {key} {written:.6g}, "
                             f"recomputed {value:.6g}")
    return len(rows), found, sources


def mismatches(path: Path) -> tuple[int, list[str]]:
    """The number of rows of ``path`` and one line per number or verdict that differs."""
    n, found, _ = check(path)
    return n, found


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else DEFAULT
    n, found, sources = check(path)
    for study, source in sources.items():
        print(f"{study or '(no study column)'}: {source}")
    for line in found:
        print(line)
    print(f"{path}: {n} comparisons, {len(found)} mismatches")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
