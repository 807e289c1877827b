"""Statistics and the verdict rule: the mean over seeds with its 95% t-interval, the
paired comparison of a claimed-better arm with another, and a claim's overall verdict."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from simfl.metrics.curves import t_quantile_975

REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_ASSESSED = (
    "reproduced", "partly", "not reproduced", "not assessed")


@dataclass(frozen=True)
class Interval:
    """Mean over seeds with its 95% t-interval (lo = hi = mean for one value)."""

    mean: float
    lo: float
    hi: float
    n: int

    @property
    def half(self) -> float:
        return (self.hi - self.lo) / 2

    def text(self, digits: int = 3) -> str:
        if self.n == 0:
            return "-"
        if self.n == 1:
            return f"{self.mean:.{digits}f} (1 seed)"
        return f"{self.mean:.{digits}f} ± {self.half:.{digits}f}"


def mean_ci(values: Iterable[float]) -> Interval:
    """The mean of the finite ``values`` and its 95% t-interval."""
    x = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    n = len(x)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0)
    mean = float(x.mean())
    if n == 1:
        return Interval(mean, mean, mean, 1)
    half = t_quantile_975(n - 1) * float(x.std(ddof=1)) / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n)


@dataclass(frozen=True)
class Comparison:
    """A claimed-better arm against another, paired by seed, with its verdict."""

    label: str
    better: Interval  # the claimed-better arm over its seeds
    other: Interval
    diff: Interval  # paired differences in the claimed direction (> 0: the claim holds)
    higher_is_better: bool
    verdict: str

    def row(self, digits: int = 3) -> list[str]:
        return [self.label, self.better.text(digits), self.other.text(digits),
                self.diff.text(digits), str(self.diff.n), self.verdict]


def compare(label: str, better: dict[Any, float], other: dict[Any, float],
            higher_is_better: bool = True) -> Comparison:
    """Compare per-seed values (seed -> value) of the claimed-better arm with another's;
    only seeds with a finite value on both sides are paired."""
    a, b = mean_ci(better.values()), mean_ci(other.values())
    sign = 1.0 if higher_is_better else -1.0
    paired = [sign * (better[s] - other[s]) for s in better if s in other
              and math.isfinite(better[s]) and math.isfinite(other[s])]
    diff = mean_ci(paired)
    if diff.n == 0 or not diff.mean > 0:
        verdict = NOT_REPRODUCED if diff.n else NOT_ASSESSED
    elif diff.n >= 2 and diff.lo > 0:
        verdict = REPRODUCED
    else:
        verdict = PARTLY
    return Comparison(label, a, b, diff, higher_is_better, verdict)


def overall(comparisons: Sequence[Comparison]) -> tuple[str, str]:
    """The verdict of a claim made of ``comparisons`` and the reason, in words."""
    assessed = [c for c in comparisons if c.verdict != NOT_ASSESSED]
    if not assessed:
        return NOT_ASSESSED, "no comparison had runs on both sides"
    counts = {v: sum(c.verdict == v for c in assessed) for v in (REPRODUCED, PARTLY, NOT_REPRODUCED)}
    n = len(assessed)
    tally = (f"{counts[REPRODUCED]} of {n} comparisons reproduced, {counts[PARTLY]} hold in "
             f"the mean only, {counts[NOT_REPRODUCED]} do not hold")
    if counts[REPRODUCED] == n:
        return REPRODUCED, tally
    if counts[NOT_REPRODUCED] == n:
        return NOT_REPRODUCED, tally
    failing = [c.label for c in assessed if c.verdict == NOT_REPRODUCED]
    if failing:
        tally += "; against: " + ", ".join(failing[:6]) + (" ..." if len(failing) > 6 else "")
    return PARTLY, tally


RULE = """A number is the mean over seeds ± the half-width of its 95% t-interval. Each
claim is tested by comparisons of a claimed-better arm with another, paired by seed:
**reproduced** when, over at least 2 paired seeds, the 95% interval of the paired
difference lies on the claimed side of 0 (which holds whenever the two arms' own
intervals do not overlap);
**partly** when the difference is on the claimed side in the mean only; **not
reproduced** when it is not. A claim made of several comparisons is reproduced when all
are, not reproduced when none holds even in the mean, partly otherwise. With 2 seeds
(the quick mode) t(0.975, 1) = 12.7, so an interval rarely excludes 0: quick-mode
verdicts are a check of the machinery, not of the papers."""
