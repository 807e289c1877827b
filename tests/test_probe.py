"""The torch side of the client probe: label histograms, client losses, graph features."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import simfl
from simfl.core.rng import RngTree
from simfl.train.data import FederatedData
from simfl.train.executor import InlineExecutor
from simfl.train.local import cross_entropy
from simfl.train.models import DenseNet
from simfl.train.probe import ClientStats, label_histograms


@pytest.fixture
def setup():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(9, 3)).astype(np.float32)
    y = np.array([0, 1, 1, 2, 2, 2, 0, 0, 1])
    parts = (np.array([0, 1, 2]), np.array([3, 4, 5, 6]), np.array([], dtype=int), np.array([7, 8]))
    data = FederatedData(x, y, parts, x[:4], y[:4], 3, 3)
    task = simfl.Task(dataset=simfl.Digits(), model=simfl.Logreg(), n_clients=4, batch_size=2,
                      local_steps=2, lr=0.1)
    net = DenseNet((3, 3))
    params = net.init(torch.Generator().manual_seed(1))
    executor = InlineExecutor(net, data, task, RngTree(0), torch.device("cpu"))
    return data, net, params, ClientStats(net, executor, cross_entropy, data.x_test, RngTree(0))


def test_label_histograms(setup):
    data = setup[0]
    assert label_histograms(data).tolist() == [[1, 2, 0], [1, 0, 3], [0, 0, 0], [1, 1, 0]]


def test_client_losses_are_each_clients_mean_loss(setup):
    data, net, params, stats = setup
    losses = stats.losses(params, [3, 0, 2])
    for value, client in zip(losses, [3, 0, 2]):
        idx = data.client_indices[client]
        if len(idx) == 0:
            assert value == 0.0
            continue
        out = net.forward(params, torch.from_numpy(data.x_train[idx]))
        expected = F.cross_entropy(out, torch.from_numpy(data.y_train[idx]))
        assert value == pytest.approx(float(expected), abs=1e-6)


def test_graph_features_shapes_and_determinism(setup):
    _, _, params, stats = setup
    update = stats.features("update", params, [0, 1, 3], 8)
    logit = stats.features("logit", params, [0, 1, 3], 8)
    assert update.shape == (3, 12) and logit.shape == (3, 3)
    assert np.abs(update).sum() > 0
    assert np.array_equal(logit, stats.features("logit", params, [0, 1, 3], 8))
