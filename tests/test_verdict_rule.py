"""The verdict rule weighs the size of an effect against the paper's: one hand-made
comparison per verdict, the paper's effect P = 0.03 throughout unless stated.

Numbers worked by hand (10 paired seeds, two-sided 95% t-interval, t(0.975, 9) = 2.262,
t(0.8, 9) = 0.883, so the smallest detectable effect D = 3.145 s / sqrt(10) = 0.995 s):
- d = 0.0004 ± 0.0001 alternating: mean 0.0004, s = 0.000105, interval about
  [0.00032, 0.00048]: significant, but far below P (and below P / 2): smaller.
- d = 0.028 ± 0.004: interval about [0.025, 0.031] contains P: reproduced.
- d = 0.02 ± 0.001: interval about [0.0193, 0.0207], excludes P but lies above P / 2:
  reproduced.
- d = 0.001 ± 0.004: interval about [-0.002, 0.004] contains 0, D ≈ 0.0042 < P and the
  interval lies below P: smaller (the seeds could have found P and did not).
- d = 0.01 ± 0.3 over 3 seeds: D far above P: inconclusive.
- d = -0.02 ± 0.001: contradicted.
"""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _verdicts():
    sys.path.insert(0, str(ROOT / "analysis"))
    try:
        from reproduction import verdicts
    finally:
        sys.path.remove(str(ROOT / "analysis"))
    return verdicts


V = _verdicts()


def _around(mean, spread, n=10):
    """n paired differences alternating mean + spread and mean - spread."""
    return {seed: mean + (spread if seed % 2 else -spread) for seed in range(1, n + 1)}


def _judge(differences, paper=0.03):
    zero = {seed: 0.0 for seed in differences}
    return V.compare("a > b", differences, zero, paper_effect=paper)


@pytest.mark.parametrize("mean, spread, n, verdict", [
    (0.0004, 0.0001, 10, "smaller than the paper's"),
    (0.028, 0.004, 10, "reproduced"),
    (0.02, 0.001, 10, "reproduced"),
    (0.001, 0.004, 10, "smaller than the paper's"),
    (0.01, 0.3, 3, "inconclusive"),
    (-0.02, 0.001, 10, "contradicted"),
])
def test_each_verdict_from_a_hand_made_comparison(mean, spread, n, verdict):
    c = _judge(_around(mean, spread, n))
    assert c.verdict == verdict, (c.diff, c.min_detectable)


def test_a_significant_effect_far_smaller_than_the_papers_is_not_reproduction():
    c = _judge(_around(0.0004, 0.0001))
    assert c.diff.lo > 0  # significant: the old rule called this reproduced
    assert c.diff.hi < V.FRACTION * 0.03 and c.verdict == V.SMALLER


def test_without_a_paper_number_only_the_direction_is_tested():
    assert _judge(_around(0.0004, 0.0001), paper=None).verdict == V.REPRODUCED
    assert _judge(_around(0.001, 0.004), paper=None).verdict == V.INCONCLUSIVE


def test_a_claim_is_not_tested_when_its_setting_cannot_test_it_and_summarises_its_comparisons():
    smaller, reproduced = _judge(_around(0.0004, 0.0001)), _judge(_around(0.028, 0.004))
    assert V.overall(V.not_tested([smaller, reproduced]))[0] == V.NOT_TESTED
    assert V.overall([smaller, reproduced])[0] == V.SMALLER
    assert V.overall([reproduced, reproduced])[0] == V.REPRODUCED
    worse = _judge(_around(-0.02, 0.001))
    assert V.overall([reproduced, smaller, worse])[0] == V.CONTRADICTED


def test_every_committed_verdict_recomputes_from_its_per_seed_differences():
    sys.path.insert(0, str(ROOT))
    try:
        from analysis.reproduction import check
    finally:
        sys.path.remove(str(ROOT))
    n, found, sources = check.check(ROOT / "docs" / "reproduction" / "comparisons.csv")
    assert n == 66 and found == []
    # every study was rerun with its raw claim metrics committed
    assert set(sources) == {"fedar", "fedar_lenet5", "cvar", "fedgs", "warm_start",
                            "warm_start_fedprox_scaffold", "fedlaavg"}
    for study, source in sources.items():
        assert source.startswith("recomputed from its raw claim metrics"), study


def test_paired_differences_follow_numeric_seed_order():
    better = {seed: float(seed) for seed in (10, 2, 1, 11)}
    c = V.compare("a > b", better, {seed: 0.0 for seed in better})
    assert c.seeds == (1, 2, 10, 11) and c.paired == (1.0, 2.0, 10.0, 11.0)
