"""A federated data set: a held-out test split and each client's training indices."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simfl.core.config import Task
from simfl.core.errors import ConfigError
from simfl.core.rng import RngTree
from simfl.train.datasets import load_samples
from simfl.train.partition import split_clients


@dataclass(frozen=True)
class FederatedData:
    x_train: np.ndarray
    y_train: np.ndarray
    client_indices: tuple[np.ndarray, ...]
    x_test: np.ndarray
    y_test: np.ndarray
    n_features: int
    n_classes: int

    @property
    def n_samples(self) -> np.ndarray:
        return np.array([len(i) for i in self.client_indices], dtype=np.int64)


def build_data(task: Task, rngs: RngTree) -> FederatedData:
    """Load the data set, hold out ``test_fraction`` and partition the rest.

    Data sets grouped by client hold out the same fraction of every client's samples,
    so the test split follows the population's mix.
    """
    samples = load_samples(task.dataset, task.n_clients, rngs)
    rng = rngs.stream("data/split")
    if samples.groups is None:
        order = rng.permutation(len(samples.y))
        n_test = int(round(task.test_fraction * len(order)))
        test, train = order[:n_test], order[n_test:]
    else:
        test_parts, train_parts = [], []
        for k in range(int(samples.groups.max()) + 1):
            idx = rng.permutation(np.flatnonzero(samples.groups == k))
            n_test = int(round(task.test_fraction * len(idx)))
            test_parts.append(idx[:n_test])
            train_parts.append(idx[n_test:])
        test, train = np.concatenate(test_parts), np.concatenate(train_parts)
    if len(train) < task.n_clients:
        raise ConfigError("task.n_clients", task.n_clients,
                          f"at most {len(train)} clients: the training split has {len(train)} samples")
    groups = None if samples.groups is None else samples.groups[train]
    parts = split_clients(task.partition, samples.y[train], groups, task.n_clients,
                          rngs.stream("data/partition"))
    n_features, n_classes = task.dataset.shape()
    return FederatedData(samples.x[train], samples.y[train], tuple(parts),
                         samples.x[test], samples.y[test], n_features, n_classes)
