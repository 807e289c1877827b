"""The verdict rule: the paired comparison of a claimed-better arm with another, Holm's
correction within a claim, a claim's overall verdict, and the rule's text for the report."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Sequence

from .intervals import (ALPHA, POWER, Interval, holm_levels, mean_ci, min_detectable,
                        paired_p_value)

REPRODUCED, CONTRADICTED, INCONCLUSIVE, NOT_ASSESSED = (
    "reproduced", "contradicted", "inconclusive", "not assessed")
#: earlier names of two verdicts, kept for callers that still use them
NOT_REPRODUCED, PARTLY = CONTRADICTED, INCONCLUSIVE

__all__ = ["ALPHA", "CONTRADICTED", "Comparison", "INCONCLUSIVE", "Interval", "NOT_ASSESSED",
           "NOT_REPRODUCED", "PARTLY", "POWER", "REPRODUCED", "RULE", "compare", "holm",
           "mean_ci", "overall"]


@dataclass(frozen=True)
class Comparison:
    """A claimed-better arm against another, paired by seed, with its verdict.

    ``paired`` holds the per-seed differences in the claimed direction (> 0: the claim
    holds); ``diff`` is their mean with its interval at the level ``1 - alpha``, which
    :func:`holm` lowers to the comparison's corrected level within its claim.
    ``paper_effect`` is the paper's difference in the same units and direction.
    """

    label: str
    better: Interval  # the claimed-better arm over its seeds
    other: Interval
    diff: Interval
    higher_is_better: bool
    verdict: str
    paired: tuple[float, ...] = ()
    paper_effect: float | None = None
    alpha: float = ALPHA
    p_value: float = math.nan

    @property
    def min_detectable(self) -> float:
        """The smallest effect these seeds detect with 80% power at the comparison's
        level (NaN below 2 paired seeds)."""
        return min_detectable(self.paired, self.alpha, POWER)

    def row(self, digits: int = 3) -> list[str]:
        paper = "-" if self.paper_effect is None else f"{self.paper_effect:+.{digits}f}"
        mde = self.min_detectable
        return [self.label, self.better.text(digits), self.other.text(digits),
                self.diff.text(digits, signed=True),
                f"{1 - self.alpha:.2%}" if self.diff.n >= 2 else "-", paper,
                f"{mde:.{digits}f}" if math.isfinite(mde) else "-", str(self.diff.n),
                self.verdict]


def _decide(paired: Sequence[float], alpha: float) -> tuple[Interval, str]:
    diff = mean_ci(paired, 1 - alpha)
    if diff.n == 0:
        return diff, NOT_ASSESSED
    if diff.n >= 2 and diff.lo > 0:
        return diff, REPRODUCED
    if diff.n >= 2 and diff.hi < 0:
        return diff, CONTRADICTED
    return diff, INCONCLUSIVE


def compare(label: str, better: dict[Any, float], other: dict[Any, float],
            higher_is_better: bool = True, *, paper_effect: float | None = None) -> Comparison:
    """Compare per-seed values (seed -> value) of the claimed-better arm with another's;
    only seeds with a finite value on both sides are paired. The verdict is at level
    ``ALPHA`` on its own; :func:`holm` corrects it within a claim."""
    a, b = mean_ci(better.values()), mean_ci(other.values())
    sign = 1.0 if higher_is_better else -1.0
    paired = tuple(sign * (better[s] - other[s]) for s in better if s in other
                   and math.isfinite(better[s]) and math.isfinite(other[s]))
    diff, verdict = _decide(paired, ALPHA)
    return Comparison(label, a, b, diff, higher_is_better, verdict, paired, paper_effect,
                      ALPHA, paired_p_value(paired))


def holm(comparisons: Sequence[Comparison], alpha: float = ALPHA) -> list[Comparison]:
    """The comparisons of one claim, each decided at its Holm level within the claim
    (:func:`.intervals.holm_levels`): its interval is the two-sided t-interval at
    1 - level, and its verdict follows from that interval."""
    levels = holm_levels([c.p_value for c in comparisons], alpha)
    out = []
    for c, level in zip(comparisons, levels):
        diff, verdict = _decide(c.paired, level)
        out.append(replace(c, diff=diff, verdict=verdict, alpha=level))
    return out


def overall(comparisons: Sequence[Comparison]) -> tuple[str, str]:
    """The verdict of a claim made of ``comparisons`` (Holm-corrected here) and the
    reason, in words: reproduced when every comparison is, contradicted when any is,
    inconclusive otherwise."""
    corrected = holm(comparisons)
    if not any(c.verdict != NOT_ASSESSED for c in corrected):
        return NOT_ASSESSED, "no comparison had runs on both sides"
    n = len(corrected)
    count = {v: [c.label for c in corrected if c.verdict == v]
             for v in (REPRODUCED, CONTRADICTED, INCONCLUSIVE, NOT_ASSESSED)}
    tally = (f"{len(count[REPRODUCED])} of {n} comparisons reproduced, "
             f"{len(count[CONTRADICTED])} contradicted, {len(count[INCONCLUSIVE])} "
             "inconclusive")
    if count[NOT_ASSESSED]:
        tally += f", {len(count[NOT_ASSESSED])} not assessed"
    if count[CONTRADICTED]:
        shown = count[CONTRADICTED]
        tally += "; contradicted: " + ", ".join(shown[:6]) + (" ..." if len(shown) > 6 else "")
        return CONTRADICTED, tally
    if len(count[REPRODUCED]) == n:
        return REPRODUCED, tally
    return INCONCLUSIVE, tally


RULE = f"""A number is the mean over seeds ± the half-width of its 95% t-interval. A claim
is tested by comparisons of a claimed-better arm with another, paired by seed: d_s is
seed s's difference in the claimed direction (> 0: the claim holds), and its mean is
*simfl's effect*. The comparisons of one claim are one family, corrected by Holm's
step-down procedure at a family-wise level of {ALPHA:g}: the m comparisons with at least
2 paired seeds are sorted by the two-sided p-value of their paired t-test; the j-th
smallest is tested at alpha_j = {ALPHA:g} / (m - j + 1), and at the first one that is not
rejected the procedure stops (it and all later ones keep its alpha_j). Each comparison
is stated with the two-sided t-interval of its mean difference at 1 - alpha_j (the
"level" column), mean ± t(1 - alpha_j/2, n - 1) s / sqrt(n):
**reproduced** when that interval lies above 0 (the claimed side), **contradicted** when
it lies below 0, **inconclusive** when it contains 0 or fewer than 2 seeds are paired,
and **not assessed** when no seed has runs on both sides. A claim is reproduced when
every one of its comparisons is, contradicted when any comparison is contradicted (a
claim states that the method is better in each of its comparisons), and inconclusive
otherwise. A difference that is on the claimed side in the mean only is inconclusive:
without any effect a mean lands on either side half the time.
Beside simfl's effect stand the paper's effect, in the same units and direction where
the paper reports one, and the *smallest detectable effect*: the true mean difference a
two-sided paired t-test at the comparison's alpha_j finds with {POWER:.0%} power over
these seeds, (t(1 - alpha_j/2, n - 1) + t({POWER:g}, n - 1)) s / sqrt(n). An effect
below it can be real and still leave the comparison inconclusive. A run whose model
diverged (simfl's warning in its summary.json) is left out of every comparison, and its
section counts such runs by arm. With 2 seeds (the
quick mode) t(0.975, 1) = 12.7, so an interval rarely excludes 0: quick-mode verdicts
are a check of the machinery, not of the papers."""
