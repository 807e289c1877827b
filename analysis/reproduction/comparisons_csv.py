"""``comparisons.csv``: every paired comparison behind the verdicts, one row each, with
its per-seed differences (``seed:difference``, in numeric seed order), so a reader can
redo the statistics without the run folders (``python -m analysis.reproduction.check``).

The ``study`` column names the part of the report a row belongs to (``fedar``,
``fedar_lenet5``, ``cvar``, ...): regenerating one study replaces its rows only.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Sequence

from .sections import Section, as_claim

COLUMNS = ("study", "paper", "claim", "comparison", "paired_seeds", "effect", "lo", "hi",
           "level", "p_value", "paper_effect", "min_detectable", "verdict",
           "per_seed_differences")


def comparison_rows(section: Section, study: str) -> list[dict[str, str]]:
    """The rows of ``section``'s comparisons, as the CSV's cells."""
    paper = section.title.split(":")[0]
    rows = []
    for claim in map(as_claim, section.claims):
        for c in claim.comparisons:
            values = [_g(c.diff.n), _g(c.diff.mean), _g(c.diff.lo), _g(c.diff.hi),
                      _g(1 - c.alpha), _g(c.p_value),
                      "" if c.paper_effect is None else _g(c.paper_effect),
                      _g(c.min_detectable), c.verdict,
                      ";".join(f"{seed}:{_g(d)}" if c.seeds else _g(d)
                               for seed, d in zip(c.seeds or c.paired, c.paired))]
            rows.append(dict(zip(COLUMNS, [study, paper, claim.claim, c.label, *values])))
    return rows


def read_comparisons(path: Path) -> list[dict[str, str]]:
    """The rows of ``path`` (none when it does not exist)."""
    if not Path(path).is_file():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def replace_study(path: Path, study: str, rows: Sequence[dict[str, str]],
                  order: Sequence[str]) -> Path:
    """Rewrite ``path`` with ``study``'s rows replaced by ``rows`` and the other studies'
    rows kept, the studies in ``order`` (the report's), each study's rows as written."""
    kept = [r for r in read_comparisons(path) if r.get("study") != study] + list(rows)
    rank = {name: i for i, name in enumerate(order)}
    kept.sort(key=lambda r: rank.get(r.get("study", ""), len(rank)))  # stable within a study
    with open(path, "w", newline="") as f:
        out = csv.DictWriter(f, COLUMNS, extrasaction="ignore")
        out.writeheader()
        out.writerows(kept)
    return Path(path)


def _g(x: float) -> str:
    return f"{x:.6g}"
