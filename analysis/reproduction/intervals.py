"""The report's statistics: the mean over seeds with its t-interval, the paired t-test,
Holm's step-down levels within a family of comparisons, and the smallest effect a number
of seeds can detect."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

#: the family-wise error rate of a claim's comparisons (two-sided)
ALPHA = 0.05
#: the power at which the minimum detectable effect is stated
POWER = 0.8


def t_quantile(q: float, dof: int) -> float:
    """The ``q`` quantile of Student's t with ``dof`` degrees of freedom."""
    from scipy.stats import t

    return float(t.ppf(q, dof))


@dataclass(frozen=True)
class Interval:
    """A mean over seeds with its two-sided t-interval at ``level`` (lo = hi = mean for
    one value)."""

    mean: float
    lo: float
    hi: float
    n: int
    level: float = 1 - ALPHA

    @property
    def half(self) -> float:
        return (self.hi - self.lo) / 2

    def text(self, digits: int = 3, signed: bool = False) -> str:
        if self.n == 0:
            return "-"
        mean = f"{self.mean:+.{digits}f}" if signed else f"{self.mean:.{digits}f}"
        if self.n == 1:
            return f"{mean} (1 seed)"
        return f"{mean} ± {self.half:.{digits}f}"


def finite(values: Iterable[float | None]) -> np.ndarray:
    """The finite values of ``values`` (None and NaN dropped) as a float array."""
    return np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)


def mean_ci(values: Iterable[float | None], level: float = 1 - ALPHA) -> Interval:
    """The mean of the finite ``values`` and its two-sided t-interval at ``level``:
    mean ± t((1 + level) / 2, n - 1) s / sqrt(n), s the sample standard deviation."""
    x = finite(values)
    n = len(x)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, level)
    mean = float(x.mean())
    if n == 1:
        return Interval(mean, mean, mean, 1, level)
    half = t_quantile((1 + level) / 2, n - 1) * float(x.std(ddof=1)) / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n, level)


def paired_p_value(differences: Sequence[float]) -> float:
    """Two-sided p-value of the paired t-test that the mean of ``differences`` is 0
    (NaN below 2 differences; 0 or 1 when they do not vary)."""
    d = finite(differences)
    n = len(d)
    if n < 2:
        return math.nan
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd == 0:
        return 1.0 if mean == 0 else 0.0
    from scipy.stats import t

    return float(2 * t.sf(abs(mean) / (sd / math.sqrt(n)), n - 1))


def holm_levels(p_values: Sequence[float], alpha: float = ALPHA) -> list[float]:
    """Holm's step-down level of each test of a family, in the order given.

    The m tests with a p-value are sorted by it; the j-th smallest is tested at
    alpha / (m - j + 1). At the first test that is not rejected the procedure stops: it
    and every later one keep its level (so a later, larger p-value is never rejected).
    A NaN p-value (too few seeds to test) is not part of the family and gets ``alpha``.
    """
    ranked = sorted((p, i) for i, p in enumerate(p_values) if math.isfinite(p))
    levels = [alpha] * len(p_values)
    m, stopped = len(ranked), None
    for j, (p, i) in enumerate(ranked, start=1):
        level = alpha / (m - j + 1)
        if stopped is None and not p <= level:
            stopped = level
        levels[i] = level if stopped is None else stopped
    return levels


def min_detectable(differences: Sequence[float], alpha: float = ALPHA,
                   power: float = POWER) -> float:
    """The smallest true mean difference that a two-sided paired t-test at ``alpha``
    detects with probability ``power`` over these seeds:
    (t(1 - alpha/2, n - 1) + t(power, n - 1)) s / sqrt(n), s the differences' sample
    standard deviation (NaN below 2 differences)."""
    d = finite(differences)
    n = len(d)
    if n < 2:
        return math.nan
    sd = float(d.std(ddof=1))
    return (t_quantile(1 - alpha / 2, n - 1) + t_quantile(power, n - 1)) * sd / math.sqrt(n)
