"""The FedGS oracle graph from each client's optimal linear-softmax model (W_k, b_k)."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from simfl import apply_overrides, run
from simfl.algorithms.fedgs import graph_distances
from simfl.core.config import parse_override
from simfl.train.data import FederatedData
from simfl.train.local_optimum import client_optima, softmax_optimum

L2 = 0.05


def sklearn_optimum(x, y, n_classes, l2):
    """The same penalised optimum from scikit-learn: the bias as a weight of a constant
    feature (so it is penalised too) and C = 1 / (l2 n) turns its summed loss plus
    ||theta||^2 / 2 into our mean loss plus l2 ||theta||^2 / 2 (times n)."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    model = LogisticRegression(C=1.0 / (l2 * len(x)), fit_intercept=False, tol=1e-12,
                               max_iter=10000).fit(xb, y)
    theta = model.coef_.T  # (d + 1, n_classes), every class present in y
    assert theta.shape[1] == n_classes
    return theta[:-1], theta[-1]


def tiny_clients():
    """Four clients of 2-d points and 3 classes: 0, 1 and 2 draw the same concept, 3 has
    the labels rotated by one class (its optimal columns are roughly 0's, permuted)."""
    rng = np.random.default_rng(7)
    centres = np.array([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
    xs, ys = [], []
    for client in range(4):
        y = np.tile(np.arange(3), 8)
        x = centres[y] + rng.normal(0.0, 0.8, size=(len(y), 2))
        ys.append((y + 1) % 3 if client == 3 else y)
        xs.append(x)
    return xs, ys


def test_softmax_optimum_matches_scikit_learn():
    xs, ys = tiny_clients()
    for x, y in zip(xs, ys):
        weights, bias = softmax_optimum(x, y, 3, L2)
        want_w, want_b = sklearn_optimum(x, y, 3, L2)
        np.testing.assert_allclose(weights, want_w, atol=1e-5)
        np.testing.assert_allclose(bias, want_b, atol=1e-5)


def test_softmax_optimum_stationary_point_by_hand():
    # one sample x = 1 of class 0, two classes, l2 = 1. By symmetry w_0 = b_0 = t and
    # w_1 = b_1 = -t, so the logits are 2t and -2t and p_0 = sigmoid(4t); the derivative
    # in w_0 of -log p_0 + (l2 / 2) ||theta||^2 is -(1 - p_0) + l2 t, zero at the optimum.
    weights, bias = softmax_optimum(np.array([[1.0]]), np.array([0]), 2, l2=1.0)
    t = weights[0, 0]
    assert weights[0, 1] == pytest.approx(-t) and bias[0] == pytest.approx(t)
    assert bias[1] == pytest.approx(-t)
    p = 1.0 / (1.0 + np.exp(-4.0 * t))  # softmax prob of class 0: logits 2t, -2t
    assert (1.0 - p) == pytest.approx(1.0 * t, abs=1e-7)


def test_client_optima_rows_and_the_graph_they_give():
    xs, ys = tiny_clients()
    sizes = [len(y) for y in ys]
    starts = np.cumsum([0] + sizes)
    data = FederatedData(np.vstack(xs), np.concatenate(ys),
                         tuple(np.arange(a, b) for a, b in zip(starts[:-1], starts[1:])),
                         np.zeros((1, 2)), np.zeros(1, dtype=np.int64), 2, 3)
    rows = client_optima(data, L2)
    assert rows.shape == (4, 9)
    for k in range(4):
        want_w, want_b = sklearn_optimum(xs[k], ys[k], 3, L2)
        np.testing.assert_allclose(rows[k], np.concatenate([want_w.ravel(), want_b]),
                                   atol=1e-5)
    # 0, 1, 2 share a concept: their optima are near-parallel; 3's labels are rotated
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    sim = unit @ unit.T
    assert sim[0, 1] > 0.9 and sim[0, 2] > 0.9 and sim[1, 2] > 0.9
    assert (sim[3, :3] < 0.0).all()
    h = graph_distances(rows, epsilon=0.1, sigma=0.1)
    # the normalised similarity of 3 to the others is at most -min(sim) / (max - min)
    # of a negative min: below epsilon, so 3 has no edge and sits at the largest distance
    assert (h[3, :3] == 1.0).all() and (h[:3, 3] == 1.0).all()
    # 0, 1, 2 are linked: shortest paths normalised by the longest, so only the longest
    # pair reaches 1
    triangle = [h[0, 1], h[0, 2], h[1, 2]]
    assert sum(d < 1.0 for d in triangle) == 2 and max(triangle) == 1.0


def test_run_with_the_optimum_graph_needs_no_exchange(tiny_scenario, tmp_path):
    scenario = apply_overrides(tiny_scenario, [parse_override("server.sampler.kind=fedgs"),
                                               parse_override("server.sampler.feature=optimum"),
                                               parse_override("run.rounds=2")])
    result = run(scenario, tmp_path / "fedgs")
    assert result.summary["graph_updates"] == 0 and result.summary["query_time_s"] == 0
    assert result.summary["trained_updates"] > 0


def test_the_reports_paper_effects_follow_the_papers_cells():
    import importlib

    from test_report import load_report

    load_report()  # puts analysis/ on the path
    fedgs = importlib.import_module("reproduction.papers.fedgs")
    gain = fedgs.paper_gain
    assert gain("sin_log_normal", "sin_log_normal, synthetic") == pytest.approx(0.006)
    assert gain("more_data_first", "more_data_first, synthetic") == pytest.approx(0.362 - 0.311)
    assert gain("ideal", "ideal, synthetic", -1.0) == pytest.approx(0.328 - 0.302)
    # a synthetic number says nothing of runs on other data, and YMF/YC carry none
    assert gain("log_normal", "log_normal, fashion-mnist") is None
    assert gain("y_cycle", "y_cycle, fashion-mnist") is None
    assert gain("y_max_first", "y_max_first, synthetic") is None
