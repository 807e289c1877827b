"""Markdown tables of the report: a plain table and the table of a claim's comparisons."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from .verdicts import Comparison


def md_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def comparison_table(comparisons: Sequence[Comparison], metric: str) -> str:
    """One row per comparison: both arms, simfl's effect (the mean paired difference in
    the claimed direction ± its interval at the comparison's level), the paper's effect,
    the smallest effect the seeds detect, the paired seeds and the verdict."""
    return md_table(["comparison", f"claimed better ({metric})", "other", "simfl's effect",
                     "level", "paper's effect", "smallest detectable", "seeds", "verdict"],
                    [c.row() for c in comparisons])
