"""``results/KEY_claims.csv``: the raw claim metrics of a study, the numbers its verdicts
are computed from.

One row per comparison and seed: the claim metric (last-10 accuracy, the rare classes'
accuracy, best test loss, ...) of the claimed-better arm's run and of the other arm's
run with that seed, and whether higher is better. Pairing the rows of a comparison by
seed, keeping the seeds with both values, and taking ``better - other`` (``other -
better`` when lower is better) gives the comparison's per-seed differences, which
``python -m analysis.reproduction.check`` recomputes every statistic from.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

from .sections import Section, as_claim
from .verdicts import seed_order

COLUMNS = ("claim", "comparison", "metric", "higher_is_better", "seed", "better", "other")
#: the file of a study's raw claim metrics, beside its runs' table ``results/KEY.csv``
SUFFIX = "_claims.csv"


def claims_path(results: Path, key: str) -> Path:
    return Path(results) / f"{key}{SUFFIX}"


def write_claim_metrics(section: Section, path: Path) -> Path:
    """Write the raw claim metrics of every comparison of ``section`` to ``path``."""
    with open(path, "w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(COLUMNS)
        for claim in map(as_claim, section.claims):
            for c in claim.comparisons:
                better, other = dict(c.better_values), dict(c.other_values)
                seeds = sorted({*better, *other}, key=seed_order)
                for seed in seeds:
                    out.writerow([claim.claim, c.label, claim.metric,
                                  "true" if c.higher_is_better else "false", seed,
                                  _exact(better.get(seed)), _exact(other.get(seed))])
    return Path(path)


def _exact(x: Any) -> str:
    """A value with every digit (``repr``), empty for a missing or non-finite one."""
    return "" if x is None or not math.isfinite(x) else repr(float(x))
