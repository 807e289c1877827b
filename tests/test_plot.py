"""simfl plot on folders of runs: grouping by seed, bands, common grid, labels, axes,
session changes, rounds.csv metrics and the protection of an existing PNG.

The run folders here are written by hand (config.json and the tables), so every expected
number is known without running a simulation; the figures are read back through
matplotlib's objects.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from simfl.cli import main
from simfl.core.errors import ConfigError, SimflError
from simfl.metrics.curves import (Series, band, build_lines, common_grid, find_runs, flatten,
                                  group_by_seed, group_labels, read_run, read_series,
                                  short_keys, step_values)
from simfl.metrics.grouping import folder_labels
from simfl.metrics.plot import make_figure, plot_runs
from simfl.metrics.plot_style import legend_title, line_styles, seed_display, time_unit

#: Student's t 0.975 quantiles from a printed table (2 and 4 degrees of freedom)
T_975 = {2: 4.303, 4: 2.776}


def write_run(folder: Path, seed: int, evals: list[tuple], deadline_s: float = 3.0,
              mac: dict | None = None, rounds: list[tuple] | None = None,
              target: float | None = 0.8, sessions: list | None = None,
              finished: bool = True, name: str = "toy") -> Path:
    """A run folder with config.json, evals.csv (t_s, round, accuracy[, session]) and
    rounds.csv (round, t_open_s, t_close_s, energy_j)."""
    folder.mkdir(parents=True)
    scenario = {"name": name, "seed": seed,
                "task": {"lr": 0.1, "n_clients": 10},
                "network": {"mac": mac or {"kind": "ideal"}},
                "server": {"deadline_s": deadline_s, "sampler": {"kind": "uniform"}},
                "run": {"rounds": 40, "target_accuracy": target,
                        "timing_only": False}}
    (folder / "config.json").write_text(json.dumps({"scenario": scenario, "seed": seed,
                                                    "model_bytes": 100, "versions": {}}))
    header = "t_s,round,accuracy,loss" + (",session" if sessions else "")
    lines = [header]
    for i, (t, r, acc) in enumerate(evals):
        lines.append(f"{t},{r},{acc},{1 - acc}" + (f",{sessions[i]}" if sessions else ""))
    (folder / "evals.csv").write_text("\n".join(lines) + "\n")
    rows = rounds or [(r, t - 1.0, t, 10.0 * r) for t, r, _ in evals[1:]]
    (folder / "rounds.csv").write_text(
        "round,t_open_s,t_close_s,energy_j\n"
        + "".join(f"{r},{t_open},{t_close},{e}\n" for r, t_open, t_close, e in rows))
    if finished:
        (folder / "summary.json").write_text("{}")
    return folder


def curve(values, step_s=10.0):
    """Evaluations (t_s, round, accuracy) every ``step_s`` seconds, one per round."""
    return [(i * step_s, i, v) for i, v in enumerate(values)]


def data_lines(fig):
    """The plotted curves (not target or session lines) of a figure's only axes."""
    ax = fig.axes[0]
    return [ln for ln in ax.get_lines() if not ln.get_label().startswith(("target", "session",
                                                                           "_"))]


def legend_texts(fig) -> list[str]:
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


@pytest.fixture
def campaign(tmp_path) -> Path:
    """2 deadlines x 3 seeds, the folders named like a campaign's."""
    root = tmp_path / "campaign"
    for d, base in ((3.0, 0.1), (6.0, 0.4)):
        for seed, shift in zip((1, 2, 3), (0.0, 0.1, 0.2)):
            write_run(root / f"deadline_s={d:g}_seed{seed}", seed,
                      curve([base + shift, base + shift + 0.1, base + shift + 0.2]), d)
    return root


# ---------------------------------------------------------------------------------
# grouping and bands


def test_runs_that_differ_only_by_seed_are_one_line_with_a_band(campaign):
    fig = make_figure([campaign])
    lines = data_lines(fig)
    assert [ln.get_label() for ln in lines] == ["deadline_s=3", "deadline_s=6"]
    # mean over the three seeds (shifts 0, 0.1, 0.2: mean shift 0.1)
    assert lines[0].get_ydata() == pytest.approx([0.2, 0.3, 0.4])
    assert lines[1].get_ydata() == pytest.approx([0.5, 0.6, 0.7])
    assert len(fig.axes[0].collections) == 2  # one band per line
    assert fig.axes[0].get_legend().get_title().get_text().startswith("mean of 3 seeds")


def test_group_by_seed_keeps_order_and_ignores_seed_and_name(tmp_path):
    a = write_run(tmp_path / "a", 1, curve([0.1, 0.2]), name="first")
    b = write_run(tmp_path / "b", 2, curve([0.1, 0.2]), deadline_s=9.0)
    c = write_run(tmp_path / "c", 3, curve([0.1, 0.2]), name="second")
    groups = group_by_seed([read_run(p) for p in (a, b, c)])
    assert [[r.path.name for r in g] for g in groups] == [["a", "c"], ["b"]]


def test_ci_band_is_the_t_interval_of_the_mean_by_hand(tmp_path):
    # three seeds whose accuracy at t = 10 is 0.1, 0.2, 0.3 and at t = 20 is 0.5, 0.5, 0.8
    for seed, (a1, a2) in enumerate(((0.1, 0.5), (0.2, 0.5), (0.3, 0.8)), start=1):
        write_run(tmp_path / f"seed{seed}", seed, curve([0.0, a1, a2]))
    (line,) = build_lines([read_run(p) for p in find_runs([tmp_path])[0]], "accuracy")
    # t = 10: mean 0.2, s = 0.1; t = 20: mean 0.6, s = sqrt(((-.1)^2 * 2 + .2^2) / 2) = sqrt(.03)
    half_10 = T_975[2] * 0.1 / math.sqrt(3)
    half_20 = T_975[2] * math.sqrt(0.03) / math.sqrt(3)
    assert line.x.tolist() == [0.0, 10.0, 20.0]
    assert line.mean == pytest.approx([0.0, 0.2, 0.6])
    assert line.lower == pytest.approx([0.0, 0.2 - half_10, 0.6 - half_20], abs=1e-3)
    assert line.upper == pytest.approx([0.0, 0.2 + half_10, 0.6 + half_20], abs=1e-3)
    # the drawn band spans the same interval
    fig = make_figure([tmp_path])
    (poly,) = fig.axes[0].collections
    ys = poly.get_paths()[0].vertices[:, 1]
    assert ys.min() == pytest.approx(0.2 - half_10, abs=1e-3)  # below 0: a wide interval
    assert ys.max() == pytest.approx(0.6 + half_20, abs=1e-3)
    # the view spans the runs' values 0 .. 0.8 and the target 0.8, with 5% margins: the
    # interval below 0 at t = 10 is cut at the edge
    assert fig.axes[0].get_ylim() == pytest.approx((-0.04, 0.84))


def test_ci_half_width_with_five_seeds():
    values = np.array([[1.0], [2.0], [3.0], [4.0], [5.0]])  # mean 3, s = sqrt(2.5)
    mean, lower, upper = band(values, "ci")
    assert mean[0] == 3.0
    assert upper[0] - mean[0] == pytest.approx(T_975[4] * math.sqrt(2.5) / math.sqrt(5), abs=1e-3)


def test_minmax_and_no_band(tmp_path):
    values = np.array([[0.1, 0.5], [0.3, 0.2], [0.2, 0.9]])
    mean, lower, upper = band(values, "minmax")
    assert lower.tolist() == [0.1, 0.2] and upper.tolist() == [0.3, 0.9]
    assert mean == pytest.approx([0.2, 1.6 / 3])
    assert band(values, "none")[1:] == (None, None)
    assert band(values[:1], "ci")[1:] == (None, None)  # one run: no band
    for seed in (1, 2, 3):
        write_run(tmp_path / f"s{seed}", seed, curve([0.1 * seed, 0.2 * seed]))
    assert len(make_figure([tmp_path], band="none").axes[0].collections) == 0
    fig = make_figure([tmp_path], band="minmax")
    assert "min to max" in fig.axes[0].get_legend().get_title().get_text()
    with pytest.raises(ConfigError, match="--band"):
        band(values, "stderr")


def test_two_seeds_are_drawn_thinly_under_their_mean_without_a_band(tmp_path):
    """A t-interval of two seeds (t = 12.7) is either nothing or the whole axis: the
    two runs are drawn instead, for every band kind but none."""
    for seed, values in ((1, [0.1, 0.5, 0.6]), (2, [0.1, 0.3, 0.7])):
        write_run(tmp_path / f"s{seed}", seed, curve(values))
    for kind in ("ci", "minmax"):
        fig = make_figure([tmp_path], band=kind)
        ax = fig.axes[0]
        assert len(ax.collections) == 0  # no band
        seeds = [ln for ln in ax.get_lines() if ln.get_label() == "_seed"]
        assert [ln.get_ydata().tolist() for ln in seeds] == [[0.1, 0.5, 0.6], [0.1, 0.3, 0.7]]
        (mean,) = data_lines(fig)
        assert mean.get_ydata() == pytest.approx([0.1, 0.4, 0.65])
        assert all(s.get_linewidth() < mean.get_linewidth() for s in seeds)
        assert all(s.get_color() == mean.get_color() for s in seeds)
        assert "thin lines: each seed" in ax.get_legend().get_title().get_text()
    (line,) = build_lines([read_run(tmp_path / "s1"), read_run(tmp_path / "s2")], "accuracy")
    assert line.lower is None and line.upper is None
    fig = make_figure([tmp_path], band="none")
    assert not [ln for ln in fig.axes[0].get_lines() if ln.get_label() == "_seed"]


def test_seed_display_and_legend_title_decide_band_or_seeds():
    assert [seed_display(n, "ci") for n in (1, 2, 3, 5)] == ["mean", "seeds", "band", "band"]
    assert seed_display(2, "minmax") == "seeds" and seed_display(5, "none") == "mean"
    assert legend_title([3, 3], "ci") == "mean of 3 seeds, band: 95% CI of the mean"
    assert legend_title([2, 4], "ci") == ("mean over seeds, band: 95% CI of the mean, thin "
                                          "lines: each seed (lines of < 3 seeds)")
    assert legend_title([1, 1], "ci") is None


def test_many_lines_differ_in_dash_and_marker_and_have_fainter_bands(tmp_path):
    few, many = line_styles(3), line_styles(5)
    assert {s.linestyle for s in few} == {"-"} and {s.marker for s in few} == {None}
    assert len({(s.linestyle, s.marker) for s in many}) == 5
    assert len({s.color for s in many}) == 5
    assert max(s.band_alpha for s in many) < min(s.band_alpha for s in few)
    for d in range(5):  # five deadlines x three seeds, on the figure
        for seed in (1, 2, 3):
            write_run(tmp_path / f"d{d}_seed{seed}", seed,
                      curve([0.1 * d + 0.01 * seed + 0.02 * i for i in range(20)]), d + 1.0)
    fig = make_figure([tmp_path])
    lines = data_lines(fig)
    assert len(lines) == 5 and len(fig.axes[0].collections) == 5
    assert len({(ln.get_linestyle(), ln.get_marker()) for ln in lines}) == 5
    assert {round(c.get_alpha(), 3) for c in fig.axes[0].collections} == {0.1}


def test_the_time_unit_follows_the_longest_line(tmp_path):
    assert [time_unit(t) for t in (30, 600, 601, 3 * 3600, 130_000, 72 * 3600 + 1)] == [
        "s", "s", "min", "min", "h", "days"]
    write_run(tmp_path / "r", 1, curve([0.1, 0.2, 0.3], step_s=65_000.0))
    fig = make_figure([tmp_path / "r"])
    assert fig.axes[0].get_xlabel() == "simulated time (h)"
    assert data_lines(fig)[0].get_xdata() == pytest.approx([0.0, 65_000 / 3600, 130_000 / 3600])
    fig = make_figure([tmp_path / "r"], unit="days")
    assert fig.axes[0].get_xlabel() == "simulated time (days)"


def test_different_time_grids_meet_on_the_union_by_steps(tmp_path):
    a = write_run(tmp_path / "a", 1, [(0.0, 0, 0.0), (5.0, 1, 0.5), (10.0, 2, 0.7)])
    b = write_run(tmp_path / "b", 2, [(0.0, 0, 0.1), (4.0, 1, 0.3), (8.0, 2, 0.6),
                                      (12.0, 3, 0.9)])
    (line,) = build_lines([read_run(a), read_run(b)], "accuracy", band_kind="none")
    # union of positions up to the earlier end (10 s): a holds 0.0 until 5 s, b 0.3 until 8 s
    assert line.x.tolist() == [0.0, 4.0, 5.0, 8.0, 10.0]
    a_steps = [0.0, 0.0, 0.5, 0.5, 0.7]
    b_steps = [0.1, 0.3, 0.3, 0.6, 0.6]
    assert line.mean == pytest.approx([(p + q) / 2 for p, q in zip(a_steps, b_steps)])


def test_step_values_take_the_last_sample_at_or_before():
    x = np.array([0.0, 1.0, 1.0, 3.0])
    y = np.array([10.0, 11.0, 12.0, 13.0])
    out = step_values(x, y, np.array([-1.0, 0.0, 0.5, 1.0, 2.9, 3.0, 7.0]))
    assert math.isnan(out[0])
    assert out[1:].tolist() == [10.0, 10.0, 12.0, 12.0, 13.0, 13.0]
    assert common_grid([Series(x, y), Series(np.array([0.5, 2.0]), np.array([1.0, 2.0]))]
                       ).tolist() == [0.5, 1.0, 2.0]


# ---------------------------------------------------------------------------------
# labels


def test_labels_name_only_the_keys_that_differ(tmp_path):
    tdma = {"kind": "tdma", "slot_s": 0.025, "mode": "slots"}
    write_run(tmp_path / "r1", 1, curve([0.1, 0.2]), 3.0)
    write_run(tmp_path / "r2", 1, curve([0.1, 0.3]), 3.0, mac=tdma)
    write_run(tmp_path / "r3", 2, curve([0.1, 0.4]), 6.0, mac=tdma)
    write_run(tmp_path / "r4", 1, curve([0.1, 0.3]), 3.0,
              mac={"kind": "aloha", "slot_s": 0.05, "access_prob": 0.1, "channels": 1})
    write_run(tmp_path / "r5", 1, curve([0.1, 0.3]), 3.0,
              mac={"kind": "aloha", "slot_s": 0.05, "access_prob": 0.05, "channels": 1})
    fig = make_figure([tmp_path])
    labels = [ln.get_label().replace("\n  ", " ") for ln in data_lines(fig)]  # long ones wrap
    # slot_s differs between the kinds that have it; access_prob between the aloha runs;
    # mode and channels come with their kind and are the same wherever they exist
    assert labels == ["mac=ideal, deadline_s=3",
                      "mac=tdma, slot_s=0.025, deadline_s=3",
                      "mac=tdma, slot_s=0.025, deadline_s=6",
                      "mac=aloha, slot_s=0.05, access_prob=0.1, deadline_s=3",
                      "mac=aloha, slot_s=0.05, access_prob=0.05, deadline_s=3"]
    for label in labels:  # keys equal in every run, the seed and the folder never appear
        assert "lr" not in label and "seed" not in label and "r1" not in label
    assert set(labels) <= {text.replace("\n  ", " ") for text in legend_texts(fig)}


def test_a_field_without_a_kind_is_named_where_it_exists(tmp_path):
    """A section set in one run and null in another (no kind to explain it) is named."""
    a = write_run(tmp_path / "a", 1, curve([0.1, 0.2]))
    b = write_run(tmp_path / "b", 1, curve([0.1, 0.2]))
    config = json.loads((b / "config.json").read_text())
    config["scenario"]["server"]["sampler"] = None
    (b / "config.json").write_text(json.dumps(config))
    assert group_labels(group_by_seed([read_run(a), read_run(b)])) == [
        "sampler=uniform", "sampler=null"]


def test_one_configuration_is_labelled_by_its_name(tmp_path):
    for seed in (1, 2):
        write_run(tmp_path / f"s{seed}", seed, curve([0.1, 0.2]))
    assert [ln.get_label() for ln in data_lines(make_figure([tmp_path]))] == ["toy"]


def test_label_option_names_lines_and_must_match_them(campaign):
    fig = make_figure([campaign], labels=["deadline_s=6=long", "deadline_s=3=short"])
    assert [ln.get_label() for ln in data_lines(fig)] == ["short", "long"]
    with pytest.raises(ConfigError, match="2 labels, one per line in order: "
                                          "deadline_s=3; deadline_s=6"):
        make_figure([campaign], labels=["one", "two", "three"])
    for plain in (["short", "long"], ["only one"]):  # the order of folder names is no order
        with pytest.raises(ConfigError, match="holds 2 lines"):
            make_figure([campaign], labels=plain)


def test_short_keys_keep_the_last_part_unless_it_clashes():
    keys = ["network.mac.kind", "server.deadline_s", "network.uplink.rate.rate_bps",
            "network.downlink.rate.rate_bps", "server.sampler", "server.sampler.kind"]
    assert short_keys(keys) == {
        "network.mac.kind": "mac", "server.deadline_s": "deadline_s",
        "network.uplink.rate.rate_bps": "uplink.rate.rate_bps",
        "network.downlink.rate.rate_bps": "downlink.rate.rate_bps",
        "server.sampler": "sampler", "server.sampler.kind": "sampler"}


def test_many_differing_keys_fall_back_to_the_folder_names(tmp_path):
    """Two different scenarios (a section set against null, here five fields) are
    named by their folders, never ``KEY=VALUE, ... +N more``."""
    battery = {"capacity_j": 36000.0, "initial_j": 30000.0, "idle_w": 0.1,
               "charge_w": 5.0, "cutoff_j": 100.0}
    for seed in (1, 2):
        write_run(tmp_path / f"battery_seed{seed}", seed, curve([0.1, 0.2]))
        write_run(tmp_path / f"battery_inf_seed{seed}", seed, curve([0.1, 0.3]))
        config_file = tmp_path / f"battery_seed{seed}" / "config.json"
        config = json.loads(config_file.read_text())
        config["scenario"]["population"] = {"battery": battery}
        config_file.write_text(json.dumps(config))
    groups = group_by_seed([read_run(p) for p in find_runs([tmp_path])[0]])
    assert group_labels(groups) == ["battery_inf", "battery"]  # natural order of folders
    assert group_labels(groups, max_keys=5)[1].startswith("capacity_j=36000, ")
    runs = [read_run(tmp_path / "battery_seed1"), read_run(tmp_path / "battery_inf_seed2")]
    assert folder_labels(group_by_seed(runs)) == ["battery", "battery_inf"]


def test_flatten_makes_dotted_keys():
    assert flatten({"a": {"b": 1, "c": {"d": None}}, "e": [1, 2]}) == {
        "a.b": 1, "a.c.d": None, "e": "[1, 2]"}


# ---------------------------------------------------------------------------------
# axes, target, sessions, rounds.csv metrics


def test_time_units_rounds_and_target(campaign):
    fig = make_figure([campaign], unit="h")
    ax = fig.axes[0]
    assert data_lines(fig)[0].get_xdata() == pytest.approx([0, 10 / 3600, 20 / 3600])
    assert ax.get_xlabel() == "simulated time (h)"
    (target,) = [ln for ln in ax.get_lines() if ln.get_label() == "target 0.8"]
    assert target.get_linestyle() == "--" and target.get_ydata()[0] == 0.8
    fig = make_figure([campaign], x="round", target=0.5)
    assert fig.axes[0].get_xlabel() == "rounds completed"
    assert data_lines(fig)[0].get_xdata().tolist() == [0, 1, 2]
    assert [ln.get_label() for ln in fig.axes[0].get_lines()
            if ln.get_label().startswith("target")] == ["target 0.5"]
    with pytest.raises(ConfigError, match="--unit"):
        make_figure([campaign], x="round", unit="h")


def test_no_default_target_for_other_metrics(campaign):
    fig = make_figure([campaign], metric="loss")
    assert not [ln for ln in fig.axes[0].get_lines() if ln.get_label().startswith("target")]
    assert fig.axes[0].get_ylabel() == "test loss"


def test_session_changes_are_drawn_at_the_last_evaluation_of_a_session(tmp_path):
    run = write_run(tmp_path / "s", 1, curve([0.1, 0.2, 0.3, 0.4, 0.5]),
                    sessions=[0, 0, 0, 1, 1])
    assert read_series(run, "accuracy").session_changes == (20.0,)
    assert read_series(run, "accuracy", "round").session_changes == (2.0,)
    fig = make_figure([run], x="round")
    changes = [ln for ln in fig.axes[0].get_lines() if "session change" in ln.get_label()]
    assert len(changes) == 1 and changes[0].get_xdata()[0] == 2.0
    assert "session change" in legend_texts(fig)
    plain = write_run(tmp_path / "p", 1, curve([0.1, 0.2]))
    assert read_series(plain, "accuracy").session_changes == ()


def test_a_rounds_csv_column_against_time_and_round(tmp_path):
    rounds = [(0, 0.0, 4.0, 2.0), (1, 4.0, 9.0, 3.0), (2, 9.0, 15.0, 7.0)]
    run = write_run(tmp_path / "r", 1, curve([0.1, 0.2, 0.3, 0.4]), rounds=rounds)
    series = read_series(run, "energy_j")
    assert series.x.tolist() == [4.0, 9.0, 15.0] and series.y.tolist() == [2.0, 3.0, 7.0]
    # against rounds completed: round index + 1, the count evals.csv uses
    assert read_series(run, "energy_j", "round").x.tolist() == [1.0, 2.0, 3.0]
    fig = make_figure([run], metric="energy_j", x="round")
    assert fig.axes[0].get_ylabel() == "energy_j (per round)"
    assert data_lines(fig)[0].get_ydata().tolist() == [2.0, 3.0, 7.0]


def test_unknown_metric_lists_the_columns(tmp_path):
    run = write_run(tmp_path / "r", 1, curve([0.1, 0.2]))
    with pytest.raises(ConfigError, match="accuracy, loss, energy_j"):
        make_figure([run], metric="nope")
    with pytest.raises(ConfigError):
        make_figure([run], metric="t_s")  # a position, not a metric


# ---------------------------------------------------------------------------------
# finding runs, the command line


def test_a_folder_of_runs_is_searched_in_natural_order_without_unfinished_runs(tmp_path):
    for seed in (10, 2, 1):
        write_run(tmp_path / "c" / "grid" / f"seed{seed}", seed, curve([0.1, 0.2]))
    write_run(tmp_path / "c" / "grid" / "seed3", 3, curve([0.1]), finished=False)
    found, unfinished = find_runs([tmp_path / "c"])
    assert [p.name for p in found] == ["seed1", "seed2", "seed10"]
    assert [p.name for p in unfinished] == ["seed3"]
    warnings = []
    make_figure([tmp_path / "c"], warn=warnings.append)
    assert len(warnings) == 1 and "seed3" in warnings[0]
    (tmp_path / "empty").mkdir()
    with pytest.raises(SimflError, match="no run folder"):
        find_runs([tmp_path / "empty"])


def test_a_malformed_config_names_its_file(tmp_path):
    run = write_run(tmp_path / "r", 1, curve([0.1, 0.2]))
    (run / "config.json").write_text("")  # a claimed folder whose run never started
    with pytest.raises(SimflError, match=r"r/config.json"):
        make_figure([run])


def test_an_existing_png_is_kept_without_force(campaign, tmp_path, capsys):
    png = tmp_path / "plot.png"
    png.write_bytes(b"keep me")
    assert main(["plot", str(campaign), "--out", str(png)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--force" in err and "Traceback" not in err
    assert png.read_bytes() == b"keep me"
    assert main(["plot", str(campaign), "--out", str(png), "--force", "--band", "minmax",
                 "--x", "time", "--unit", "min", "--label", "deadline_s=3=a",
                 "--label", "deadline_s=6=b"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ConfigError):
        plot_runs([campaign], png)


def test_command_line_errors_are_one_line(campaign, tmp_path, capsys):
    for argv in (["--metric", "nope"], ["--label", "x"], ["--x", "round", "--unit", "h"],
                 ["--target", "nan"]):
        assert main(["plot", str(campaign), "--out", str(tmp_path / "p.png"), *argv]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert not (tmp_path / "p.png").exists()


# ---------------------------------------------------------------------------------
# the MAC what-if study's folders


def load_script(path: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"script_{path.parent.name}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_mac_whatif_study_writes_runs_that_group_by_seed(tmp_path):
    """The study's folders (written here with the study's own resolved scenarios, nothing
    simulated) give one line per access scheme, labelled by the scheme, and the analysis
    finds them and pools the slot tables of a timing-only run over seeds."""
    import simfl

    root = Path(__file__).resolve().parents[1]
    study = load_script(root / "scenarios" / "mac_whatif.py")
    analysis = load_script(root / "analysis" / "mac_whatif.py")
    runs = study.study_runs((5, 6))
    assert "time_to_accuracy/mac.kind=tdma_mac.slot_s=0.025_seed6" in runs
    assert "slots/N=40_p=0.05" in runs
    for name, sets in runs.items():
        if name.startswith("slots/") and name != "slots/N=10_p=0.1":
            continue
        scenario = simfl.apply_overrides(study.scenario(),
                                         [simfl.parse_override(s) for s in sets])
        folder = write_run(tmp_path / name, scenario.seed, curve([0.1, 0.5, 0.9]))
        (folder / "config.json").write_text(json.dumps({"scenario": scenario.to_dict(),
                                                        "seed": scenario.seed}))
    for seed in (5, 6):  # the same slot run under a second seed
        write_run(tmp_path / "slots" / f"copy{seed}", seed, curve([0.1]))
    for folder in (tmp_path / "slots").iterdir():
        if folder.name.startswith("copy"):
            config = json.loads((tmp_path / "slots" / "N=10_p=0.1" / "config.json").read_text())
            (folder / "config.json").write_text(json.dumps(config))
        (folder / "events.csv").write_text("t_s,kind,round,client,detail\n"
                                           "1.0,mac_slots,0,-1,1:4:4 10:20:7\n")
    fig = make_figure([tmp_path / "time_to_accuracy"])
    assert [ln.get_label() for ln in data_lines(fig)] == [  # in natural order of folders
        "mac=ideal", "mac=slotted_aloha, slot_s=0.05", "mac=tdma, slot_s=0.025"]
    sweep, training = analysis.read_study(tmp_path)
    assert len(training) == 6
    assert sweep == {(10, 0.1): {1: [12, 12], 10: [60, 21]}}  # three runs pooled


# ---------------------------------------------------------------------------------
# hostile folders and tables


def test_links_to_folders_are_not_followed(tmp_path):
    """A link to the folder itself would be walked again and again (two such links
    double the walk at every level); only the real run folder is found."""
    write_run(tmp_path / "c" / "seed1", 1, curve([0.1, 0.2]))
    (tmp_path / "c" / "loop").symlink_to(".", target_is_directory=True)
    found, unfinished = find_runs([tmp_path / "c"])
    assert found == [tmp_path / "c" / "seed1"] and unfinished == []
    (tmp_path / "link").symlink_to(tmp_path / "c", target_is_directory=True)
    assert [p.name for p in find_runs([tmp_path / "link"])[0]] == ["seed1"]  # named: taken


def test_a_table_with_a_byte_order_mark_is_read(tmp_path):
    run = write_run(tmp_path / "r", 1, curve([0.1, 0.2, 0.3]))
    for table in ("evals.csv", "rounds.csv"):
        (run / table).write_bytes(b"\xef\xbb\xbf" + (run / table).read_bytes())
    assert read_series(run, "accuracy").x.tolist() == [0.0, 10.0, 20.0]
    assert read_series(run, "energy_j", "round").y.tolist() == [10.0, 20.0]


def test_a_missing_position_column_is_one_line(tmp_path, capsys):
    run = write_run(tmp_path / "r", 1, curve([0.1, 0.2]))
    (run / "evals.csv").write_text("round,accuracy\n0,0.1\n1,0.2\n")
    with pytest.raises(SimflError, match=r"evals.csv has no t_s column, which --x time"):
        read_series(run, "accuracy")
    assert read_series(run, "accuracy", "round").y.tolist() == [0.1, 0.2]
    assert main(["plot", str(run), "--out", str(tmp_path / "p.png")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "t_s" in err and "Traceback" not in err


@pytest.mark.parametrize("value", ["1e308", "-1e308", "inf"])
def test_values_that_cannot_be_drawn_are_refused_naming_the_file(tmp_path, capsys, value):
    run = write_run(tmp_path / "r", 1, curve([0.1, 0.2]))
    (run / "evals.csv").write_text(f"t_s,round,accuracy\n0,0,0.1\n10,1,{value}\n")
    assert main(["plot", str(run), "--out", str(tmp_path / "p.png")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "evals.csv line 3" in err and not (tmp_path / "p.png").exists()
    (run / "evals.csv").write_text(f"t_s,round,accuracy\n0,0,0.1\n{value},1,0.2\n")
    with pytest.raises(SimflError, match="evals.csv line 3"):
        read_series(run, "accuracy")


def test_a_diverged_run_still_plots_without_its_nan_values(tmp_path):
    run = write_run(tmp_path / "r", 1, curve([0.1, 0.2]))
    (run / "evals.csv").write_text("t_s,round,accuracy\n0,0,0.1\n10,1,nan\n20,2,0.3\n")
    assert read_series(run, "accuracy").x.tolist() == [0.0, 20.0]


def test_out_in_a_missing_folder_is_refused_and_nothing_created(campaign, tmp_path, capsys):
    out = tmp_path / "no" / "such" / "p.png"
    assert main(["plot", str(campaign), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--out" in err and "Traceback" not in err
    assert not (tmp_path / "no").exists()
