"""Central evaluation (simfl.train.evaluate)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from simfl.train.evaluate import Evaluator
from simfl.train.models import DenseNet


def test_chunked_evaluation_equals_one_pass():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((103, 5)).astype(np.float32)
    y = rng.integers(0, 3, size=103)
    net = DenseNet((5, 4, 3))
    params = net.init(torch.Generator().manual_seed(1))
    logits = net.forward(params, torch.from_numpy(x))
    expected_acc = float((logits.argmax(1).numpy() == y).mean())
    expected_loss = float(F.cross_entropy(logits, torch.from_numpy(y)))
    for chunk_rows in (7, 103, 1000):
        accuracy, loss = Evaluator(net, x, y, torch.device("cpu"), chunk_rows=chunk_rows)(params)
        assert accuracy == pytest.approx(expected_acc, abs=1e-12)
        assert loss == pytest.approx(expected_loss, rel=1e-6)


def test_worked_example():
    """Logits (2, 0) and (0, 0) for labels 0 and 1: one right (argmax ties go to class 0)."""
    net = DenseNet((2, 2))
    params = {"layer0.weight": torch.eye(2), "layer0.bias": torch.zeros(2)}
    x = np.array([[2.0, 0.0], [0.0, 0.0]], dtype=np.float32)
    accuracy, loss = Evaluator(net, x, np.array([0, 1]), torch.device("cpu"), chunk_rows=1)(params)
    assert accuracy == 0.5
    assert loss == pytest.approx((np.log(1 + np.exp(-2.0)) + np.log(2.0)) / 2, abs=1e-6)
