"""One paper's part of the report: its claims with their verdicts, its body, the line
that states its campaign's setting, and the block that states a claim's verdict."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

from .campaigns import Campaign
from .tables import comparison_table
from .verdicts import Comparison, overall


@dataclass
class Section:
    """One paper's part of the report."""

    title: str
    claims: list[tuple[str, str, str]]  # (claim in one sentence, verdict, reason)
    body: list[str] = field(default_factory=list)
    campaign: Campaign | None = None

    def scale(self) -> list[str]:
        """Seeds, rounds and study wall time, for the verdict table."""
        c = self.campaign
        if c is None:
            return ["-", "-", "-"]
        seeds = sorted({r.seed for r in c.runs})
        wall_s = c.meta.get("wall_time_s")
        return [f"{len(seeds)} ({', '.join(map(str, seeds))})",
                str(c.meta.get("notes", {}).get("rounds", "-")),
                f"{wall_s:.0f} s" if isinstance(wall_s, (int, float)) else "-"]


def setting_line(c: Campaign) -> str:
    m = c.meta
    seeds = sorted({r.seed for r in c.runs})
    notes = ", ".join(f"{k} {v}" for k, v in sorted(m.get("notes", {}).items()))
    return (f"*Campaign* `{c.folder}`: {m.get('mode')} mode, {len(c.runs)} finished runs"
            f"{f' ({c.unfinished} unfinished)' if c.unfinished else ''}, seeds "
            f"{', '.join(map(str, seeds))}; {notes}; study wall time "
            f"{m.get('wall_time_s', math.nan):.0f} s with {m.get('jobs', 1)} worker(s), "
            f"runs' summed wall time {c.wall_time_s:.0f} s.")


def verdict_block(claim: str, comparisons: Sequence[Comparison], metric: str,
                  claims: list[tuple[str, str, str]], body: list[str]) -> None:
    verdict, reason = overall(comparisons)
    claims.append((claim, verdict, reason))
    body += [f"**Claim.** {claim}", "", comparison_table(comparisons, metric),
             f"**Verdict: {verdict}** ({reason}).", ""]
