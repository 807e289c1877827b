"""The studies' per-run summaries: the mean over seeds, a t-band from three seeds on, and
each seed's value as a cross below that."""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from simfl.metrics.seed_means import mean_band, plot_seed_means  # noqa: E402


def test_the_band_is_the_95_percent_t_interval_of_the_mean():
    mean, half = mean_band([1.0, 2.0, 6.0])  # sd = sqrt(7), t(0.975, 2) = 4.302653
    assert mean == pytest.approx(3.0)
    assert half == pytest.approx(4.302653 * math.sqrt(7.0) / math.sqrt(3.0), rel=1e-6)
    assert mean_band([5.0]) == (5.0, 0.0)


def test_points_with_fewer_than_three_seeds_get_crosses_and_no_band():
    fig, ax = plt.subplots()
    plot_seed_means(ax, {1.0: [1.0, 2.0, 3.0], 2.0: [4.0, 6.0], 3.0: []}, "-o", "line")
    mean_line, crosses = ax.lines
    assert list(mean_line.get_xdata()) == [1.0, 2.0]
    assert list(mean_line.get_ydata()) == [2.0, 5.0]
    assert list(zip(crosses.get_xdata(), crosses.get_ydata())) == [(2.0, 4.0), (2.0, 6.0)]
    band = ax.collections[0].get_paths()[0].vertices
    assert not any(x == 2.0 for x in band[:, 0] if math.isfinite(x)), "no band at x = 2"
    plt.close(fig)
