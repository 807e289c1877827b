"""The scenario against its data: per-client lists of one entry per client, class labels
where availability reads them, and a data set and partition that can give every client
its samples (computed as the run will, without training)."""

from __future__ import annotations

import numpy as np

from simfl.core.config import Scenario
from simfl.core.config.availability import Bernoulli
from simfl.core.config.server import FedAvgIS
from simfl.core.errors import ConfigError
from simfl.core.rng import RngTree


def check_per_client_lists(scenario: Scenario) -> None:
    """Every per-client list has one entry per client (``task.n_clients``)."""
    n = scenario.task.n_clients
    lists = []
    availability = scenario.population.availability
    if isinstance(availability, Bernoulli):
        lists.append(("population.availability.p", availability.p))
    algorithm = scenario.server.algorithm
    if isinstance(algorithm, FedAvgIS):
        lists.append(("server.algorithm.p", algorithm.p))
    mac = scenario.network.mac
    lists.extend((f"network.mac.{name}", getattr(mac, name))
                 for name in mac.capabilities.per_client)
    for field, value in lists:
        if isinstance(value, tuple) and len(value) != n:
            raise ConfigError(field, value, f"one number or a list of task.n_clients = {n} "
                              f"(one per client; this list has {len(value)})")


def check_labels_exist(scenario: Scenario) -> None:
    """Label-based availability needs a data set with class labels."""
    availability = scenario.population.availability
    dataset = scenario.task.dataset
    if availability.needs_labels and dataset.loss != "cross_entropy":
        raise ConfigError("population.availability.kind", availability.kind,
                          f"an availability model that does not read class labels: the "
                          f"{dataset.kind} data set has none")


def check_data(scenario: Scenario) -> None:
    """The data set and the partition can give every client its samples.

    Computes every client's size as the run will (a size model, or the partition itself
    for ``dirichlet``): more clients than training samples, too many shards per client,
    a Dirichlet minimum never reached, ``native`` on a data set without clients, no test
    sample left for evaluation. With sessions: enough clients for the groups and labels
    for every group.
    """
    from simfl.train.data import build_data, client_sizes
    from simfl.train.datasets import sample_counts

    task = scenario.task
    sessions = scenario.population.sessions
    rngs = RngTree(scenario.seed)
    if not scenario.run.timing_only:  # evaluation needs a test sample
        counts = np.asarray(sample_counts(task.dataset, task.n_clients, rngs))
        n_test = int(np.round(task.test_fraction * counts).astype(np.int64).sum())
        if n_test < 1:
            raise ConfigError("task.test_fraction", task.test_fraction,
                              f"a fraction that leaves at least one test sample (of "
                              f"{int(counts.sum())} samples it holds out none)")
    if sessions is not None:
        sessions.client_groups(task.n_clients)
        if sessions.split_labels:
            sessions.label_sets(task.dataset.shape()[1])
            build_data(task, rngs, sessions)  # the label groups' own partition rules
            return
    client_sizes(task, rngs)
