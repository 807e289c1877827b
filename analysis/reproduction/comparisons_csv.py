"""``comparisons.csv``: every paired comparison behind the verdicts, one row each, with
its per-seed differences (``seed:difference``, in seed order), so a reader can redo the
statistics without the run folders (``python -m analysis.reproduction.check``)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Sequence

from .sections import Section, as_claim

COLUMNS = ("paper", "claim", "comparison", "paired_seeds", "effect", "lo", "hi", "level",
           "p_value", "paper_effect", "min_detectable", "verdict", "per_seed_differences")


def write_comparisons(sections: Sequence[Section], path: Path) -> Path:
    """Write the comparisons of every claim of ``sections`` to ``path`` (CSV)."""
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(COLUMNS)
        for section in sections:
            paper = section.title.split(":")[0]
            for claim in map(as_claim, section.claims):
                for c in claim.comparisons:
                    out.writerow([paper, claim.claim, c.label, c.diff.n, _g(c.diff.mean),
                                  _g(c.diff.lo), _g(c.diff.hi), _g(1 - c.alpha), _g(c.p_value),
                                  "" if c.paper_effect is None else _g(c.paper_effect),
                                  _g(c.min_detectable), c.verdict,
                                  ";".join(f"{seed}:{_g(d)}" if c.seeds else _g(d)
                                           for seed, d in zip(c.seeds or c.paired, c.paired))])
    return path


def _g(x: float) -> str:
    return f"{x:.6g}"
