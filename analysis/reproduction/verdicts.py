"""The verdict rule: the paired comparison of a claimed-better arm with another, Holm's
correction within a claim, a claim's overall verdict, and the rule's text for the report."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Sequence

from .intervals import (ALPHA, POWER, Interval, holm_levels, mean_ci, min_detectable,
                        paired_p_value)

REPRODUCED, SMALLER, CONTRADICTED, INCONCLUSIVE, NOT_TESTED, NOT_ASSESSED = (
    "reproduced", "smaller than the paper's", "contradicted", "inconclusive", "not tested",
    "not assessed")
#: earlier names of two verdicts, kept for callers that still use them
NOT_REPRODUCED, PARTLY = CONTRADICTED, INCONCLUSIVE
#: an interval that lies wholly above this fraction of the paper's effect reproduces it
#: even when it excludes the paper's effect itself
FRACTION = 0.5

__all__ = ["ALPHA", "CONTRADICTED", "Comparison", "FRACTION", "INCONCLUSIVE", "Interval",
           "NOT_ASSESSED", "NOT_REPRODUCED", "NOT_TESTED", "PARTLY", "POWER", "REPRODUCED",
           "RULE", "SMALLER", "compare", "decide", "holm", "mean_ci", "not_tested", "overall",
           "seed_order"]


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
    seeds: tuple[Any, ...] = ()  # the seed of each entry of ``paired``
    #: every seed's value of the claimed-better arm and of the other, ``(seed, value)``
    #: in seed order (NaN where a run is missing, diverged or unscored): the raw claim
    #: metrics ``paired`` is computed from
    better_values: tuple[tuple[Any, float], ...] = ()
    other_values: tuple[tuple[Any, float], ...] = ()

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


def decide(diff: Interval, paper_effect: float | None, mde: float) -> str:
    """The verdict of one comparison from its (corrected) interval of the mean paired
    difference in the claimed direction, the paper's effect in the same units and
    direction (None: the paper gives no number) and the smallest detectable effect."""
    if diff.n == 0:
        return NOT_ASSESSED
    if diff.n < 2:
        return INCONCLUSIVE
    if diff.hi < 0:
        return CONTRADICTED
    if paper_effect is None or paper_effect <= 0:  # direction only
        return REPRODUCED if diff.lo > 0 else INCONCLUSIVE
    if diff.lo > 0 and (diff.hi >= paper_effect or diff.lo >= FRACTION * paper_effect):
        return REPRODUCED
    if diff.lo > 0:
        return SMALLER  # significant, but the interval lies below the paper's effect
    if not mde <= paper_effect:  # the seeds could not have found the paper's effect
        return INCONCLUSIVE
    return SMALLER if diff.hi < paper_effect else INCONCLUSIVE


def _decide(paired: Sequence[float], alpha: float,
            paper_effect: float | None) -> tuple[Interval, str]:
    diff = mean_ci(paired, 1 - alpha)
    return diff, decide(diff, paper_effect, min_detectable(paired, alpha, POWER))


def compare(label: str, better: dict[Any, float], other: dict[Any, float],
            higher_is_better: bool = True, *, paper_effect: float | None = None) -> Comparison:
    """Compare per-seed values (seed -> value) of the claimed-better arm with another's;
    only seeds with a finite value on both sides are paired. The verdict is at level
    ``ALPHA`` on its own; :func:`holm` corrects it within a claim."""
    a, b = mean_ci(better.values()), mean_ci(other.values())
    sign = 1.0 if higher_is_better else -1.0
    seeds = tuple(sorted((s for s in better if s in other and math.isfinite(better[s])
                          and math.isfinite(other[s])), key=seed_order))
    paired = tuple(sign * (better[s] - other[s]) for s in seeds)
    diff, verdict = _decide(paired, ALPHA, paper_effect)
    return Comparison(label, a, b, diff, higher_is_better, verdict, paired, paper_effect,
                      ALPHA, paired_p_value(paired), seeds, _by_seed(better), _by_seed(other))


def _by_seed(values: dict[Any, float]) -> tuple[tuple[Any, float], ...]:
    return tuple((s, math.nan if values[s] is None else float(values[s]))
                 for s in sorted(values, key=seed_order))


def seed_order(seed: Any) -> tuple[int, Any]:
    """Seeds in numeric order (1, 2, ..., 10), whatever their type."""
    try:
        return 0, float(seed)
    except (TypeError, ValueError):
        return 1, str(seed)


def not_tested(comparisons: Sequence[Comparison]) -> list[Comparison]:
    """The comparisons of a claim that simfl's setting cannot test (the report says why:
    for instance a metric that stays at chance level in every arm), each marked so."""
    return [replace(c, verdict=NOT_TESTED) for c in comparisons]


def holm(comparisons: Sequence[Comparison], alpha: float = ALPHA) -> list[Comparison]:
    """The comparisons of one claim, each decided at its Holm level within the claim
    (:func:`.intervals.holm_levels`): its interval is the two-sided t-interval at
    1 - level, and its verdict follows from that interval."""
    levels = holm_levels([c.p_value for c in comparisons], alpha)
    out = []
    for c, level in zip(comparisons, levels):
        diff, verdict = _decide(c.paired, level, c.paper_effect)
        out.append(replace(c, diff=diff, alpha=level,
                           verdict=NOT_TESTED if c.verdict == NOT_TESTED else verdict))
    return out


def overall(comparisons: Sequence[Comparison]) -> tuple[str, str]:
    """The verdict of a claim made of ``comparisons`` (Holm-corrected here) and the
    reason, in words: not tested when simfl's setting cannot test it; contradicted when
    any comparison is; reproduced when every one is; smaller than the paper's when every
    one is that or reproduced; inconclusive otherwise."""
    corrected = holm(comparisons)
    if corrected and all(c.verdict == NOT_TESTED for c in corrected):
        return NOT_TESTED, "simfl's setting cannot test the claim"
    if not any(c.verdict != NOT_ASSESSED for c in corrected):
        return NOT_ASSESSED, "no comparison had runs on both sides"
    n = len(corrected)
    kinds = (REPRODUCED, SMALLER, CONTRADICTED, INCONCLUSIVE, NOT_TESTED, NOT_ASSESSED)
    count = {v: [c.label for c in corrected if c.verdict == v] for v in kinds}
    tally = (f"{len(count[REPRODUCED])} of {n} comparisons reproduced, "
             + (f"{len(count[SMALLER])} smaller than the paper's, " if count[SMALLER] else "")
             + f"{len(count[CONTRADICTED])} contradicted, {len(count[INCONCLUSIVE])} "
             "inconclusive")
    for v in (NOT_TESTED, NOT_ASSESSED):
        if count[v]:
            tally += f", {len(count[v])} {v}"
    if count[CONTRADICTED]:
        shown = count[CONTRADICTED]
        tally += "; contradicted: " + ", ".join(shown[:6]) + (" ..." if len(shown) > 6 else "")
        return CONTRADICTED, tally
    if len(count[REPRODUCED]) == n:
        return REPRODUCED, tally
    if len(count[REPRODUCED]) + len(count[SMALLER]) == n:
        return SMALLER, tally
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
"level" column), mean ± t(1 - alpha_j/2, n - 1) s / sqrt(n). Beside simfl's effect stand
the paper's effect P, in the same units and direction, and the *smallest detectable
effect* D: the true mean difference a two-sided paired t-test at the comparison's alpha_j
finds with {POWER:.0%} power over these seeds, (t(1 - alpha_j/2, n - 1) + t({POWER:g},
n - 1)) s / sqrt(n). Significance alone is not reproduction: the verdict weighs the size
of the effect against the paper's. A comparison is
**contradicted** when its interval lies below 0 (significant the other way);
**reproduced** when it lies above 0 and is compatible with the paper's effect: it
contains P or lies above it, or it lies wholly above {FRACTION:g} P;
**smaller than the paper's** when its interval lies below P, either above 0 (a real
effect, but smaller than the paper's) or containing 0 while the seeds could have found
P (D ≤ P);
**inconclusive** when its interval contains 0 and the seeds could not have found the
paper's effect (D > P), or contains both 0 and P, or fewer than 2 seeds are paired;
**not tested** when simfl's setting cannot test the claim (the section says why, for
instance a metric that stays at chance level in every arm); and **not assessed** when no
seed has runs on both sides. Where the paper gives no number for a comparison, only the
direction is tested (reproduced when the interval lies above 0) and the section says
what was compared instead. A claim is contradicted when any of its comparisons is (a
claim states that the method is better in each of them), reproduced when every one is,
smaller than the paper's when every one is that or reproduced, and inconclusive
otherwise. A difference on the claimed side in the mean only is never reproduction:
without any effect a mean lands on either side half the time. A run whose model
diverged (simfl's warning in its summary.json) is left out of every comparison, and its
section counts such runs by arm. With 2 seeds (the
quick mode) t(0.975, 1) = 12.7, so an interval rarely excludes 0: quick-mode verdicts
are a check of the machinery, not of the papers."""
