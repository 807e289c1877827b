"""Client groups with their own label sets (the A/B sessions of docs/algorithms.md §3).

Group g's clients hold only samples whose label is in group g's label set
(:meth:`simfl.core.config.Sessions.label_sets`). Every sample of a label is given to
exactly one of the groups that share that label (the label's samples are shuffled and
cut into equal parts, one per owning group), so shared labels do not duplicate data.
Within a group the task's own partition (``iid``, ``dirichlet``, ``shards``) splits the
group's pool among the group's clients, so ``dirichlet`` gives each client of a group
skewed proportions over that group's labels only.
"""

from __future__ import annotations

import numpy as np

from simfl.core.config import Native, Partition, Sessions
from simfl.core.errors import ConfigError
from simfl.core.rng import RngTree
from simfl.train.partition import split_clients


def split_label_groups(partition: Partition, y: np.ndarray, sessions: Sessions, n_clients: int,
                       n_classes: int, rngs: RngTree) -> list[np.ndarray]:
    """Indices into ``y`` of each client's training samples, group by group."""
    if isinstance(partition, Native):
        raise ConfigError("population.sessions.split_labels", True,
                          "false with the native partition (its clients come with the data set)")
    label_sets = sessions.label_sets(n_classes)
    groups = sessions.client_groups(n_clients)
    rng = rngs.stream("data/partition/labels")
    pools: list[list[np.ndarray]] = [[] for _ in label_sets]
    for label in range(n_classes):
        owners = [g for g, labels in enumerate(label_sets) if label in labels]
        idx = rng.permutation(np.flatnonzero(y == label))
        for g, chunk in zip(owners, np.array_split(idx, len(owners))):
            pools[g].append(chunk)
    parts: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * n_clients
    for g, chunks in enumerate(pools):
        pool = np.sort(np.concatenate(chunks))
        members = np.flatnonzero(groups == g)
        if len(pool) < len(members):
            raise ConfigError("population.sessions.groups", sessions.groups,
                              f"fewer groups or clients: group {g} has {len(pool)} samples "
                              f"for {len(members)} clients")
        local = split_clients(partition, y[pool], None, len(members),
                              rngs.stream(f"data/partition/group/{g}"))
        for client, part in zip(members, local):
            parts[client] = pool[part]
    return parts
