"""ArrayData hands large float32 arrays over without copying them (peak memory on a
CIFAR-sized workload is the data once, not three times)."""

import numpy as np

import simfl
from simfl.core.rng import RngTree
from simfl.train.data import build_data


def _arrays():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((60, 3, 4, 4), dtype=np.float32)
    x_test = rng.standard_normal((10, 3, 4, 4), dtype=np.float32)
    return x, rng.integers(0, 4, 60), x_test, rng.integers(0, 4, 10)


def test_float32_features_reach_the_executor_as_views_of_the_callers_arrays():
    x, y, x_test, y_test = _arrays()
    task = simfl.Task(dataset=simfl.ArrayData(x, y, x_test, y_test), partition=simfl.Iid(),
                      model=simfl.Mlp(), n_clients=6)
    data = build_data(task, RngTree(1))
    assert np.shares_memory(data.x_train, x) and np.shares_memory(data.x_test, x_test)
    assert data.x_train.shape == (60, 48)


def test_other_dtypes_are_converted_and_the_digest_follows_the_contents():
    x, y, x_test, y_test = _arrays()
    as_float64 = simfl.ArrayData(x.astype(np.float64), y, x_test, y_test)
    held, *_ = as_float64.held()
    assert held.dtype == np.float32 and not np.shares_memory(held, x)
    assert as_float64.digest == simfl.ArrayData(x, y, x_test, y_test).digest
    x2 = x.copy()
    x2[0, 0, 0, 0] += 1.0
    assert simfl.ArrayData(x2, y, x_test, y_test).digest != as_float64.digest
