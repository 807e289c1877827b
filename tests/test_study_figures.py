"""Study figures stand alone: no empty panel with a meaningless axis, titles inside the
figure, log axes that show every bar, and a note in the panel where points are missing.

The figures are drawn from rows written here (the values a campaign's table holds), so
which points are missing is known; the texts and extents are read back from matplotlib.
"""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"{name}_figure", ROOT / "scenarios" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def cell_rows(reached: dict) -> list[dict]:
    """Rows of the cell-edge grid at 5 clients, 1 and 5 MHz, equal scheduler, 3 seeds;
    ``reached[(radius, band)]`` says whether the seeds reach the target there."""
    rows = []
    for (radius, band), ok in reached.items():
        for seed in (1, 2, 3):
            rows.append({"population.placement.radius_m": radius,
                         "network.radio.bandwidth_hz": band, "network.mac.scheduler": "equal",
                         "server.clients_per_round": 5, "seed": seed, "rounds": 30,
                         "sim_time_s": 60.0 + radius / 10 + seed,
                         "time_to_target_s": 40.0 + radius / 10 + seed if ok else None})
    return rows


def inside(fig, artist) -> bool:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)  # the study closed its figure: a canvas to measure on
    box = artist.get_window_extent(canvas.get_renderer())
    width, height = canvas.get_width_height()
    return box.x0 >= 0 and box.x1 <= width and box.y1 <= height


def test_cell_edge_names_the_points_no_seed_reached(tmp_path):
    study = load("cell_edge")
    fig = study.draw(cell_rows({(100.0, 1e6): True, (600.0, 1e6): True, (100.0, 5e6): True,
                                (600.0, 5e6): False}), tmp_path / "c.png")
    tta = fig.axes[1]
    note = "\n".join(texts(tta))
    assert "not reached in 30 rounds by any seed" in note and "5 MHz, equal at 600 m" in note
    assert "1 MHz" not in note
    assert texts(fig.axes[0]) == []  # every round length is there
    assert inside(fig, fig._suptitle)


def test_a_cell_edge_panel_that_nobody_reached_says_so(tmp_path):
    study = load("cell_edge")
    fig = study.draw(cell_rows({(100.0, 1e6): False, (600.0, 1e6): False}), tmp_path / "c.png")
    assert any("not reached\nin 30 rounds by any run" in t for t in texts(fig.axes[1]))
    assert list(fig.axes[1].get_yticks()) == []  # no ±0.04 scale for nothing
    assert inside(fig, fig._suptitle)  # one column: the title still fits


def test_the_compression_quick_figure_shows_every_bar_and_says_what_was_not_reached(tmp_path):
    study = load("compression")
    study.main(["--out", str(tmp_path / "cs"), "--quick"])
    from simfl.campaign.results import table

    _, rows = table(tmp_path / "cs")
    fig = study.draw(tmp_path / "cs", rows, tmp_path / "again.png")
    bars = fig.axes[1]
    low, high = bars.get_ylim()
    tops = [p.get_y() + p.get_height() for p in bars.patches if p.get_height() > 0]
    assert len(tops) >= 4 and all(low < top < high for top in tops)
    reached = [r for r in rows if r["time_to_target_s"] is not None]
    if not reached:  # three rounds: no scheme gets there
        assert any("not reached" in t for t in texts(fig.axes[2]))


def test_the_helpers_write_inside_the_panel():
    from matplotlib.figure import Figure

    from simfl.metrics.seed_means import mark_empty, note_missing, plot_seed_means

    ax = Figure().add_subplot()
    assert plot_seed_means(ax, {1.0: [2.0], 2.0: []}, "-o", "a") == [2.0]
    note_missing(ax, ["not reached: a at 2"])
    mark_empty(ax, "nothing")
    assert texts(ax) == ["not reached: a at 2", "nothing"]


def report_figures():
    import sys

    sys.path.insert(0, str(ROOT / "analysis"))
    from reproduction import figures

    return figures


def test_a_report_panel_without_values_says_so():
    import numpy as np

    from simfl.metrics.curves import Series

    figures = report_figures()
    some = {"a": [Series(np.arange(3.0), np.array([0.1, 0.2, 0.3]))]}
    fig = figures.panels_figure([figures.Panel("drawn", some),
                                 figures.Panel("empty", {"a": []})], "accuracy")
    drawn, empty = fig.axes
    assert texts(drawn) == [] and any("no values" in t for t in texts(empty))
    assert list(empty.get_yticks()) == []


def test_report_bars_on_a_log_axis_show_every_bar():
    figures = report_figures()
    fig = figures.bars_figure({"s1": {"a": [10.0, 12.0], "b": [0.004, 0.006]},
                               "s2": {"a": [900.0], "b": [0.0, 0.0]}}, "variance", log=True)
    ax = fig.axes[0]
    low, high = ax.get_ylim()
    tops = [p.get_height() for p in ax.patches if p.get_height() > 0]
    assert min(tops) == pytest.approx(0.005) and all(low < t < high for t in tops)
    assert "0" in texts(ax)  # the bar of zeros, which a log axis cannot draw
