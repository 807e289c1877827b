"""Splitting training samples across clients (numpy only)."""

from __future__ import annotations

import numpy as np

from simfl.core.config import Dirichlet, Iid, Native, Partition, Shards
from simfl.core.errors import ConfigError


def iid(cfg: Iid, y: np.ndarray, groups, n_clients: int, rng: np.random.Generator):
    return np.array_split(rng.permutation(len(y)), n_clients)


def dirichlet(cfg: Dirichlet, y: np.ndarray, groups, n_clients: int, rng: np.random.Generator):
    """For each class, split its samples by proportions ~ Dirichlet(alpha, ..., alpha).

    Redraws (at most 100 times) until every client holds at least ``min_samples``.
    """
    classes = np.unique(y)
    for _ in range(100):
        parts: list[list[np.ndarray]] = [[] for _ in range(n_clients)]
        for c in classes:
            idx = rng.permutation(np.flatnonzero(y == c))
            cuts = (np.cumsum(rng.dirichlet(np.full(n_clients, cfg.alpha)))[:-1] * len(idx))
            for client, chunk in enumerate(np.split(idx, cuts.astype(np.int64))):
                parts[client].append(chunk)
        out = [np.sort(np.concatenate(p)) for p in parts]
        if min(len(p) for p in out) >= cfg.min_samples:
            return out
    raise ConfigError("task.partition.min_samples", cfg.min_samples,
                      "a smaller minimum, or a larger alpha or data set: 100 Dirichlet draws "
                      "never gave every client that many samples")


def shards(cfg: Shards, y: np.ndarray, groups, n_clients: int, rng: np.random.Generator):
    """Sort by label, cut into ``n_clients * per_client`` shards, deal them out at random."""
    n_shards = n_clients * cfg.per_client
    if n_shards > len(y):
        raise ConfigError("task.partition.per_client", cfg.per_client,
                          f"at most {len(y) // n_clients} shards per client for {len(y)} samples")
    order = rng.permutation(len(y))
    order = order[np.argsort(y[order], kind="stable")]
    pieces = np.array_split(order, n_shards)
    deal = rng.permutation(n_shards).reshape(n_clients, cfg.per_client)
    return [np.sort(np.concatenate([pieces[s] for s in row])) for row in deal]


def native(cfg: Native, y: np.ndarray, groups, n_clients: int, rng: np.random.Generator):
    if groups is None:
        raise ConfigError("task.partition", "native", "a partition other than native: this "
                          "data set has no natural clients (use iid, dirichlet or shards)")
    return [np.flatnonzero(groups == k) for k in range(n_clients)]


_SPLITTERS = {Iid: iid, Dirichlet: dirichlet, Shards: shards, Native: native}


def split_clients(cfg: Partition, y: np.ndarray, groups: np.ndarray | None, n_clients: int,
                  rng: np.random.Generator) -> list[np.ndarray]:
    """Indices into ``y`` of each client's training samples."""
    return _SPLITTERS[type(cfg)](cfg, y, groups, n_clients, rng)
