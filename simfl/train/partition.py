"""Splitting training samples across clients (numpy only).

Every partition also has a size model, :func:`client_sizes`: the number of samples each
client gets, computed from the same random draws as the split but without the samples,
so that timing-only runs of huge populations cost one integer per client:

* ``iid``: equal parts, the first ``n % K`` clients one sample more (no randomness);
* ``shards``: ``per_client`` shards of the ``n_shards`` near-equal shards, dealt by the
  same permutation as the split (drawn before the sample order for this reason);
* ``native``: each group's training samples (its ``fallback``'s sizes for data without
  natural clients);
* ``dirichlet``: per-class proportions applied to the per-class counts of the training
  split; this needs every training label, so it has no size model and
  :func:`simfl.train.data.client_sizes` builds the data set for it.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from simfl.core.config import Dirichlet, Iid, LabelBlocks, Native, Partition, Shards
from simfl.core.errors import ConfigError
from simfl.core.registry import has_implementation, implementation_of, implements


def iid(cfg: Iid, y: np.ndarray, groups, n_clients: int, rng: np.random.Generator):
    return np.array_split(rng.permutation(len(y)), n_clients)


def _equal_parts(n: int, n_parts: int) -> np.ndarray:
    """Sizes of ``np.array_split`` of ``n`` items into ``n_parts``."""
    sizes = np.full(n_parts, n // n_parts, dtype=np.int64)
    sizes[:n % n_parts] += 1
    return sizes


def iid_sizes(cfg: Iid, n_train: int, groups: np.ndarray | None, n_clients: int,
              rng: np.random.Generator) -> np.ndarray:
    return _equal_parts(n_train, n_clients)


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
    deal = _deal_shards(cfg, len(y), n_clients, rng)
    order = rng.permutation(len(y))
    order = order[np.argsort(y[order], kind="stable")]
    pieces = np.array_split(order, deal.size)
    return [np.sort(np.concatenate([pieces[s] for s in row])) for row in deal]


def _deal_shards(cfg: Shards, n_train: int, n_clients: int, rng: np.random.Generator) -> np.ndarray:
    """Which shards each client gets: ``[n_clients, per_client]`` shard numbers."""
    n_shards = n_clients * cfg.per_client
    if n_shards > n_train:
        raise ConfigError("task.partition.per_client", cfg.per_client,
                          f"at most {n_train // n_clients} shards per client for {n_train} samples")
    return rng.permutation(n_shards).reshape(n_clients, cfg.per_client)


def shards_sizes(cfg: Shards, n_train: int, groups: np.ndarray | None, n_clients: int,
                 rng: np.random.Generator) -> np.ndarray:
    deal = _deal_shards(cfg, n_train, n_clients, rng)
    return _equal_parts(n_train, deal.size)[deal].sum(axis=1)


def native(cfg: Native, y: np.ndarray, groups, n_clients: int, rng: np.random.Generator):
    if groups is None and cfg.fallback is not None:
        return split_clients(cfg.fallback, y, None, n_clients, rng)
    if groups is None:
        raise ConfigError("task.partition", "native", "a partition other than native: this "
                          "data set has no natural clients (use iid, dirichlet or shards)")
    return [np.flatnonzero(groups == k) for k in range(n_clients)]


def native_sizes(cfg: Native, n_train: int, groups: np.ndarray | None, n_clients: int,
                 rng: np.random.Generator) -> np.ndarray:
    """``groups`` here holds each group's number of training samples."""
    if groups is None and cfg.fallback is not None:
        return client_sizes(cfg.fallback, n_train, None, n_clients, rng)
    if groups is None:
        native(cfg, np.empty(0), None, n_clients, rng)  # raises the ConfigError
    return np.asarray(groups[:n_clients], dtype=np.int64)


def label_blocks(cfg: LabelBlocks, y: np.ndarray, groups, n_clients: int,
                 rng: np.random.Generator) -> list[np.ndarray]:
    """Each block's labels' samples (a shared label's cut in equal parts, one per block)
    shuffled and split into equal parts among the block's clients."""
    if not cfg.clients:
        return iid(Iid(), y, groups, n_clients, rng)
    if sum(cfg.clients) != n_clients:
        raise ConfigError("task.partition.clients", list(cfg.clients),
                          f"blocks of clients adding up to task.n_clients = {n_clients}")
    pools: list[list[np.ndarray]] = [[] for _ in cfg.clients]
    for label in range(int(y.max(initial=-1)) + 1):
        owners = [b for b, labels in enumerate(cfg.labels) if label in labels]
        idx = rng.permutation(np.flatnonzero(y == label))
        for b, chunk in zip(owners, np.array_split(idx, max(len(owners), 1))):
            pools[b].append(chunk)
    parts = []
    for chunks, n in zip(pools, cfg.clients):
        pool = rng.permutation(np.concatenate(chunks)) if chunks else np.empty(0, np.int64)
        parts += [np.sort(part) for part in np.array_split(pool, n)]
    return parts


class Splitter(NamedTuple):
    """A partition's implementation: ``split(cfg, y, groups, n_clients, rng)`` gives each
    client's indices; ``sizes(cfg, n_train, group_sizes, n_clients, rng)``, when the
    partition can tell them without the labels, each client's number of samples (the same
    draws as ``split``). A plain function registered for a partition is its ``split``."""

    split: Callable[..., list[np.ndarray]]
    sizes: Callable[..., np.ndarray] | None = None


for _config, _splitter in ((Iid, Splitter(iid, iid_sizes)), (Dirichlet, Splitter(dirichlet)),
                           (Shards, Splitter(shards, shards_sizes)),
                           (Native, Splitter(native, native_sizes)),
                           (LabelBlocks, Splitter(label_blocks))):
    implements(_config, _splitter)


def splitter(cfg: Partition) -> Splitter:
    """The implementation of ``task.partition``."""
    found = implementation_of(cfg, "task.partition.kind")
    return found if isinstance(found, Splitter) else Splitter(found)


def split_clients(cfg: Partition, y: np.ndarray, groups: np.ndarray | None, n_clients: int,
                  rng: np.random.Generator) -> list[np.ndarray]:
    """Indices into ``y`` of each client's training samples."""
    return splitter(cfg).split(cfg, y, groups, n_clients, rng)


def has_size_model(cfg: Partition) -> bool:
    if isinstance(cfg, Native) and cfg.fallback is not None:
        return has_size_model(cfg.fallback)
    return has_implementation(cfg) and splitter(cfg).sizes is not None


def client_sizes(cfg: Partition, n_train: int, group_sizes: np.ndarray | None, n_clients: int,
                 rng: np.random.Generator) -> np.ndarray:
    """Each client's number of samples under ``cfg``, equal to the lengths
    :func:`split_clients` gives with the same ``rng`` (``group_sizes``: each natural
    group's training samples, for data sets generated per client)."""
    sizes = splitter(cfg).sizes
    if sizes is None:
        raise ConfigError("task.partition.kind", cfg.kind, "a partition that can tell each "
                          "client's size without the labels")
    return sizes(cfg, n_train, group_sizes, n_clients, rng)
