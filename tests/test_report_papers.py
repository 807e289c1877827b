"""The per-paper measures of the reproduction report on runs written by hand: the CVaR
study's rare classes, the warm starts' window after a switch and their alignment on it,
FedLaAvg's best accuracy."""

import importlib

import numpy as np
import pytest

from test_report import load_report, write_run

load_report()  # puts analysis/ on the path, as python -m studies does
cvar = importlib.import_module("reproduction.papers.cvar")
warm = importlib.import_module("reproduction.papers.warm_start")
fedlaavg = importlib.import_module("reproduction.papers.fedlaavg")


def test_the_rare_classes_are_those_of_the_least_relayed_users(tmp_path):
    # users 1 and 3 have the smallest weight and hold classes 2 and 0
    scenario = {"name": "x", "seed": 1, "network": {"mac": {"probs": [1, 0.05, 1, 0.05]}}}
    run = write_run(tmp_path / "r", scenario,
                    {"round": [0, 5], "accuracy": [0.1, 0.5], "acc_class_0": [0.0, 0.2],
                     "acc_class_1": [0.0, 0.9], "acc_class_2": [0.0, 0.6]},
                    labels=[[0, 9, 0], [1, 0, 8], [0, 7, 2], [6, 0, 0]])
    assert cvar.rare_classes(run) == [0, 2]
    s = cvar.rare_series(run)
    assert s.x.tolist() == [0.0, 5.0] and s.y == pytest.approx([0.0, 0.4])


def sessions_run(folder, rounds_per_session=4):
    # pilot session 0, restart 1, returning sessions 2 and 3, 4 rounds each
    rounds = np.arange(17)
    session = np.concatenate([[0], np.repeat(np.arange(4), rounds_per_session)])
    acc = np.concatenate([[0.0], np.tile([0.1, 0.2, 0.3, 0.4], 2), [0.5, 0.6, 0.7, 0.8],
                          [0.2, 0.4, 0.6, 0.8]])
    scenario = {"name": "x", "seed": 1, "task": {"partition": {"alpha": 0.3}},
                "population": {"sessions": {"pilot_sessions": 1, "label_overlap": 2,
                                            "rounds_per_session": rounds_per_session}}}
    return write_run(folder, scenario, {"round": rounds, "accuracy": acc, "session": session})


def test_the_window_after_a_switch_and_the_switch_rounds(tmp_path):
    run = sessions_run(tmp_path / "r")
    scores = warm.switch_scores(run, window=2)
    assert scores[2] == pytest.approx((0.5, 0.55, 0.8))
    assert scores[3] == pytest.approx((0.2, 0.3, 0.8))
    assert warm.switch_rounds(run) == [8.0, 12.0]
    assert warm.cell(run) == "overlap 2, dir 0.3"
    # aligned on the switch, averaged over the two returning sessions, x = 1 .. 4
    pieces = [warm.after(p) for p in warm.since_each(warm.series(run, "accuracy"),
                                                     warm.switch_rounds(run), 4)]
    mean = warm.mean_series(pieces)
    assert mean.x.tolist() == [1, 2, 3, 4]
    assert mean.y == pytest.approx([0.35, 0.5, 0.65, 0.8])


def test_paper_gains_of_the_warm_starts():
    assert warm.paper_gain("previous") == pytest.approx(0.9097 - 0.6234)
    assert warm.paper_gain("continuous") is None


def test_fedlaavg_best_accuracy_and_the_last_rounds(tmp_path):
    run = write_run(tmp_path / "r", {"name": "x", "seed": 1},
                    {"round": [0, 10, 20, 30], "accuracy": [0.1, 0.7, float("nan"), 0.6]})
    assert fedlaavg.best_accuracy(run) == pytest.approx(0.7)
    tail = fedlaavg.last(fedlaavg.series(run, "accuracy"), 15)
    assert tail.x.tolist() == [30.0]
    assert fedlaavg.PAPER_BEST_GAIN["diurnal"] == pytest.approx(0.0423)
