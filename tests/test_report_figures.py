"""The reproduction report's figures: the curve helpers (aligned on an event, phase
spans, the rule that draws each seed), small figure files, and image links that resolve
to files the report wrote."""

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from simfl.metrics.curves import Series

from test_report import fedlaavg_campaign, report

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "analysis"))

from reproduction.aligned import (bimodal, draws_seeds, mean_series, phase_spans,  # noqa: E402
                                  since, since_each)
from reproduction.figures import Panel, plot_bars, plot_panels  # noqa: E402

IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)")


def test_since_counts_x_from_the_event():
    s = Series(np.arange(10.0), np.arange(10.0) * 2)
    piece = since(s, 4, 6)
    assert piece.x.tolist() == [0.0, 1.0, 2.0] and piece.y.tolist() == [8.0, 10.0, 12.0]
    pieces = since_each(s, [2, 5, 20], 2)
    assert len(pieces) == 2  # nothing after x = 20
    mean = mean_series(pieces)
    assert mean.x.tolist() == [0.0, 1.0, 2.0]
    assert mean.y.tolist() == pytest.approx([(4 + 10) / 2, (6 + 12) / 2, (8 + 14) / 2])


def test_phase_spans_shade_every_other_half_period():
    assert phase_spans(50, 10, 20, start=10) == [(10, 20), (30, 40)]
    assert phase_spans(45, 10, 20) == [(0, 10), (20, 30), (40, 45)]
    with pytest.raises(ValueError, match="every 0"):
        phase_spans(10, 1, 0)


def test_bimodal_rule():
    # the rare class's accuracy over five seeds of a two-way outcome
    assert bimodal([0.99, 0.36, 1.0, 0.21, 0.49])
    assert not bimodal([0.50, 0.52, 0.55, 0.56, 0.58, 0.61])  # spread, no split
    assert not bimodal([0.5, 0.5, 0.5, 0.9])  # one outlier is not a second mode
    assert not bimodal([0.7] * 6)
    many = np.ones((20, 3))
    assert not draws_seeds(many) and draws_seeds(many[:5])
    many[::2, -1] = 0.2
    assert draws_seeds(many)


def test_figures_are_small_files(tmp_path):
    x = np.arange(0, 100.0)
    lines = {f"arm {k}": [Series(x, np.sin(x / 10 + s) + k) for s in range(3)] for k in range(3)}
    grid = plot_panels(tmp_path / "grid.png", [Panel(f"mode {m}", lines) for m in range(7)],
                       "loss", ncols=4, sharey=True)
    shaded = plot_panels(tmp_path / "day.svg", [Panel("diurnal", lines,
                                                      shade=phase_spans(100, 10, 20, 10),
                                                      shade_label="night")], "accuracy")
    bars = plot_bars(tmp_path / "bars.png", {"ideal": {"a": {1: 1.0, 2: 2.0}, "b": [50.0]}},
                     "variance", log=True)
    for path in (grid, shaded, bars):
        assert 0 < path.stat().st_size < 150_000
    assert grid.read_bytes()[:4] == b"\x89PNG" and b"<svg" in shaded.read_bytes()[:500]


def test_the_reports_image_links_resolve_to_its_figures(tmp_path):
    out = tmp_path / "docs" / "reproduction"
    path = report.write_report([fedlaavg_campaign(tmp_path, 0.02)], out)
    links = IMAGE.findall(path.read_text())
    assert links
    for link in links:
        assert not Path(link).is_absolute()
        assert (path.parent / link).is_file(), link
