"""A federated data set: a held-out test split and each client's training indices."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simfl.core.config import Sessions, Task
from simfl.core.errors import ConfigError
from simfl.core.rng import RngTree
from simfl.train.datasets import Samples, load_samples, sample_counts
from simfl.train.label_groups import split_label_groups
from simfl.train.partition import client_sizes as partition_sizes, has_size_model, split_clients


@dataclass(frozen=True)
class FederatedData:
    x_train: np.ndarray
    y_train: np.ndarray
    client_indices: tuple[np.ndarray, ...]
    x_test: np.ndarray
    y_test: np.ndarray
    n_features: int
    n_classes: int
    #: one sample's shape before flattening (``Dataset.input_shape``)
    input_shape: tuple[int, ...] = ()

    @property
    def n_samples(self) -> np.ndarray:
        return np.array([len(i) for i in self.client_indices], dtype=np.int64)


def build_data(task: Task, rngs: RngTree, sessions: Sessions | None = None) -> FederatedData:
    """Load the data set, hold out ``test_fraction`` and partition the rest.

    Data sets grouped by client hold out the same fraction of every client's samples,
    so the test split follows the population's mix. Data sets whose files hold a test
    split (``Dataset.own_test_split``) keep it: all their training samples train and
    ``test_fraction`` is not used.
    """
    samples = load_samples(task.dataset, task.n_clients, rngs)
    if samples.test is None:
        train, test = _hold_out(task, samples, rngs.stream("data/split"))
        groups = None if samples.groups is None else samples.groups[train]
        samples, test = Samples(samples.x[train], samples.y[train], groups), \
            Samples(samples.x[test], samples.y[test])
    else:  # no copy of a large training split
        test = samples.test
    _check_enough(task, len(samples.y))
    n_features, n_classes = task.dataset.shape()
    if sessions is not None and sessions.split_labels:  # label sets per client group
        parts = split_label_groups(task.partition, samples.y, sessions, task.n_clients,
                                   n_classes, rngs)
    else:
        parts = split_clients(task.partition, samples.y, samples.groups, task.n_clients,
                              rngs.stream("data/partition"))
    return FederatedData(samples.x, samples.y, tuple(parts), test.x, test.y,
                         n_features, n_classes, task.dataset.input_shape())


def _hold_out(task: Task, samples: Samples, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the training and the test samples (``test_fraction`` held out)."""
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
    return train, test


def _check_enough(task: Task, n_train: int) -> None:
    if n_train < task.n_clients:
        raise ConfigError("task.n_clients", task.n_clients,
                          f"at most {n_train} clients: the training split has {n_train} samples")


def client_sizes(task: Task, rngs: RngTree) -> np.ndarray:
    """Each client's training-set size, equal to ``build_data(task, rngs).n_samples``.

    Computed from the data set's sample counts and the partition's size model
    (:mod:`simfl.train.partition`) without making a single sample, except for
    partitions that have no size model (``dirichlet``), which build the data set.
    Timing-only runs use this: 10^6 synthetic clients cost a few arrays of 10^6 numbers.
    """
    if not has_size_model(task.partition):
        return build_data(task, rngs).n_samples
    counts = sample_counts(task.dataset, task.n_clients, rngs)
    group_sizes = None
    if task.dataset.own_test_split:  # the counts are the training samples already
        if np.ndim(counts) == 0:
            n_train = int(counts)
        else:
            group_sizes = np.asarray(counts, dtype=np.int64)
            n_train = int(group_sizes.sum())
    elif np.ndim(counts) == 0:
        n_train = int(counts) - int(round(task.test_fraction * int(counts)))
    else:  # the same per-group hold-out as build_data
        group_sizes = counts - np.round(task.test_fraction * counts).astype(np.int64)
        n_train = int(group_sizes.sum())
    _check_enough(task, n_train)
    return partition_sizes(task.partition, n_train, group_sizes, task.n_clients,
                           rngs.stream("data/partition"))
