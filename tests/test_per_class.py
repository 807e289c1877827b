"""Per-class test accuracy (``run.per_class_accuracy``): the Evaluator's counts and the
``acc_class_k`` columns of ``evals.csv``."""

import csv

import numpy as np
import pytest
import torch

import simfl
from simfl import experiment
from simfl.experiment.build import build_context
from simfl.train.evaluate import Evaluator
from simfl.train.models import DenseNet


def identity_net():
    """A 3-class linear model whose logits are the inputs themselves."""
    net = DenseNet((3, 3))
    return net, {"layer0.weight": torch.eye(3), "layer0.bias": torch.zeros(3)}


def test_class_accuracy_counts_by_hand():
    # labels 0, 0, 1, 1, 1, 2; predictions (argmax of x) 0, 1, 1, 1, 0, 2
    # -> class 0: 1 of 2, class 1: 2 of 3, class 2: 1 of 1; class 3 has no test sample
    x = np.array([[1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 1, 0], [1, 0, 0], [0, 0, 1]],
                 dtype=np.float32)
    y = np.array([0, 0, 1, 1, 1, 2])
    net, params = identity_net()
    for chunk_rows in (1, 4, 100):
        evaluate = Evaluator(net, x, y, torch.device("cpu"), chunk_rows=chunk_rows)
        per_class = evaluate.class_accuracy(params, 4)
        assert per_class[:3] == (0.5, 2 / 3, 1.0)
        assert np.isnan(per_class[3])
        assert evaluate(params)[0] == pytest.approx(4 / 6)  # the overall accuracy is unchanged


def test_real_valued_targets_have_no_class_accuracy():
    net, params = identity_net()
    evaluate = Evaluator(net, np.eye(3, dtype=np.float32), np.zeros((3, 3), dtype=np.float32),
                         torch.device("cpu"), loss=lambda out, y: ((out - y) ** 2).sum(1))
    assert all(np.isnan(v) for v in evaluate.class_accuracy(params, 2))


def scenario(**run):
    return simfl.Scenario(
        name="per_class", seed=4,
        task=simfl.Task(dataset=simfl.Blobs(n_samples=300, n_features=2, centers=3),
                        partition=simfl.Iid(), model=simfl.Logreg(), n_clients=6, lr=0.1),
        server=simfl.Server(clients_per_round=3, deadline_s=100.0),
        run=simfl.Run(rounds=3, **run))


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_off_by_default_and_the_columns_when_on(tmp_path):
    plain = experiment.run_scenario(scenario(), tmp_path / "plain").out_dir
    on = experiment.run_scenario(scenario(per_class_accuracy=True), tmp_path / "on").out_dir
    header = (plain / "evals.csv").read_text().splitlines()[0]
    assert header == "t_s,round,accuracy,loss"
    assert (on / "evals.csv").read_text().splitlines()[0] == \
        "t_s,round,accuracy,loss,acc_class_0,acc_class_1,acc_class_2"
    rows_plain, rows_on = read(plain / "evals.csv"), read(on / "evals.csv")
    assert len(rows_on) == len(rows_plain) == 4
    data = build_context(scenario()).data
    counts = np.bincount(data.y_test, minlength=3)
    for a, b in zip(rows_plain, rows_on):
        assert a == {k: b[k] for k in a}  # the usual columns are the same values
        per_class = np.array([float(b[f"acc_class_{k}"]) for k in range(3)])
        # the overall accuracy is the per-class accuracies weighted by the test counts
        assert float(b["accuracy"]) == pytest.approx(per_class @ counts / counts.sum())


def test_with_sessions_the_class_columns_follow_session(tmp_path):
    s = scenario(per_class_accuracy=True)
    s = simfl.apply_overrides(s, [("population.sessions",
                                   {"groups": 2, "rounds_per_session": 2, "label_overlap": 1})])
    out = experiment.run_scenario(s, tmp_path / "sessions").out_dir
    assert (out / "evals.csv").read_text().splitlines()[0] == \
        "t_s,round,accuracy,loss,session,acc_class_0,acc_class_1,acc_class_2"


def test_timing_only_runs_have_no_class_columns(tmp_path):
    s = scenario(per_class_accuracy=True, timing_only=True)
    out = experiment.run_scenario(s, tmp_path / "timing").out_dir
    assert (out / "evals.csv").read_text().splitlines()[0] == "t_s,round,accuracy,loss"
