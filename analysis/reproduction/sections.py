"""One paper's part of the report: its claims with their verdicts, its body, the line
that states its campaign's setting, and the block that states a claim's verdict."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Sequence

from .campaigns import Campaign
from .tables import comparison_table
from .verdicts import NOT_ASSESSED, Comparison, holm, overall

#: the key of a study's ``notes`` that lists where it still differs from the paper
DIFFERS = "differs"


class Claim(NamedTuple):
    """A claim's row of the verdict table. A plain ``(claim, verdict, reason)`` tuple is
    read as one; ``seeds`` and ``rounds`` replace the section's own where this claim's
    runs differ (one deterministic run per setting, say)."""

    claim: str
    verdict: str
    reason: str
    paper_effect: str = "-"
    simfl_effect: str = "-"
    seeds: str | None = None
    rounds: str | None = None
    comparisons: tuple[Comparison, ...] = ()  # as decided (Holm-corrected), for the CSV
    metric: str = ""  # what the comparisons compare (their runs' claim metric)


def as_claim(row: Sequence[Any]) -> Claim:
    return row if isinstance(row, Claim) else Claim(*row)


@dataclass
class Section:
    """One paper's part of the report; ``seeds`` and ``rounds`` replace what the verdict
    table would read from the campaign (its seeds, its notes' ``rounds``). ``key`` names
    the section's committed parts (``sections/KEY.md``, ``results/KEY.csv``, ...; default:
    the campaign's study), for a study with several campaigns (FedAR per model)."""

    title: str
    claims: list[Any]  # Claim or (claim in one sentence, verdict, reason)
    body: list[str] = field(default_factory=list)
    campaign: Campaign | None = None
    seeds: str | None = None
    rounds: str | None = None
    key: str | None = None

    def scale(self) -> list[str]:
        """Seeds, rounds and study wall time, for the verdict table."""
        c = self.campaign
        if c is None:
            return [self.seeds or "-", self.rounds or "-", "-"]
        seeds = sorted({r.seed for r in c.runs})
        wall_s = c.meta.get("wall_time_s")
        return [self.seeds or f"{len(seeds)} ({', '.join(map(str, seeds))})",
                self.rounds or str(c.meta.get("notes", {}).get("rounds", "-")),
                f"{wall_s:.0f} s" if isinstance(wall_s, (int, float)) else "-"]

    def differs(self) -> str:
        """Where the study still differs from the paper (its notes' ``differs``)."""
        found = (self.campaign.meta.get("notes", {}).get(DIFFERS) if self.campaign else None)
        if not found:
            return "-"
        return "; ".join(map(str, found)) if isinstance(found, (list, tuple)) else str(found)

    def rows(self) -> list[list[str]]:
        """The section's rows of the verdict table."""
        seeds, rounds, wall = self.scale()
        paper, differs = self.title.split(":")[0], self.differs()
        return [[paper, c.claim, c.paper_effect, c.simfl_effect, f"**{c.verdict}**", c.reason,
                 c.seeds or seeds, c.rounds or rounds, differs, wall]
                for c in map(as_claim, self.claims)]


def setting_line(c: Campaign) -> str:
    m = c.meta
    seeds = sorted({r.seed for r in c.runs})
    notes = ", ".join(f"{k} {v}" for k, v in sorted(m.get("notes", {}).items()) if k != DIFFERS)
    line = (f"*Campaign* `{c.folder}`: {m.get('mode')} mode, {len(c.runs)} finished runs"
            f"{f' ({c.unfinished} unfinished)' if c.unfinished else ''}, seeds "
            f"{', '.join(map(str, seeds))}; {notes}; study wall time "
            f"{m.get('wall_time_s', math.nan):.0f} s with {m.get('jobs', 1)} worker(s), "
            f"runs' summed wall time {c.wall_time_s:.0f} s.")
    diverged = Counter(r.arm for r in c.runs if r.diverged)
    if diverged:
        line += (" Runs whose model diverged (left out of the comparisons): "
                 + ", ".join(f"{arm} {n} of {len(c.arm(arm))}" for arm, n in diverged.items())
                 + ".")
    differs = m.get("notes", {}).get(DIFFERS)
    if differs:
        items = differs if isinstance(differs, (list, tuple)) else [differs]
        line += " Where the study still differs from the paper: " + "; ".join(map(str, items)) + "."
    return line


def effects(comparisons: Sequence[Comparison]) -> tuple[str, str]:
    """The paper's and simfl's effects of a claim, in words: the one comparison's, or
    the smallest and largest of several (simfl's with their corrected intervals)."""
    papers = sorted({c.paper_effect for c in comparisons if c.paper_effect is not None})
    paper = ("-" if not papers else f"{papers[0]:+.3f}" if len(papers) == 1
             else f"{papers[0]:+.3f} … {papers[-1]:+.3f}")
    done = sorted((c for c in comparisons if c.verdict != NOT_ASSESSED),
                  key=lambda c: c.diff.mean)
    if not done:
        return paper, "-"
    if len(done) == 1:
        return paper, done[0].diff.text(signed=True)
    lo, hi = done[0], done[-1]
    return paper, (f"{lo.diff.text(signed=True)} ({lo.label}) … "
                   f"{hi.diff.text(signed=True)} ({hi.label})")


def paired_seeds(comparisons: Sequence[Comparison]) -> str | None:
    """The paired seeds of a claim's comparisons: one number, or the range."""
    ns = sorted({c.diff.n for c in comparisons if c.diff.n})
    if not ns:
        return None
    return f"{ns[0]} paired" if len(ns) == 1 else f"{ns[0]}–{ns[-1]} paired"


def verdict_block(claim: str, comparisons: Sequence[Comparison], metric: str,
                  claims: list[Any], body: list[str], *, paper_effect: str | None = None,
                  seeds: str | None = None, rounds: str | None = None) -> None:
    """Decide a claim from its comparisons (Holm-corrected within the claim), add its
    row to ``claims`` and its table and verdict to ``body``. ``paper_effect`` replaces
    the paper's effect read from the comparisons; ``seeds`` and ``rounds`` the section's."""
    corrected = holm(comparisons)
    verdict, reason = overall(corrected)
    paper, simfl = effects(corrected)
    claims.append(Claim(claim, verdict, reason, paper_effect or paper, simfl,
                        seeds or paired_seeds(corrected), rounds, tuple(corrected), metric))
    body += [f"**Claim.** {claim}", "", comparison_table(corrected, metric),
             f"**Verdict: {verdict}** ({reason}).", ""]
