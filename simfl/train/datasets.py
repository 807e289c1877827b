"""Data sets as numpy arrays (no torch), optionally grouped by their natural client."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simfl.core.config import Blobs, Dataset, Digits, Synthetic
from simfl.core.rng import RngTree


@dataclass(frozen=True)
class Samples:
    """Features ``x`` (float32, one row per sample), labels ``y`` (int64), and for data
    sets generated per client, ``groups`` (the client each sample belongs to)."""

    x: np.ndarray
    y: np.ndarray
    groups: np.ndarray | None = None


def load_digits(cfg: Digits, n_clients: int, rngs: RngTree) -> Samples:
    from sklearn.datasets import load_digits as sk_digits

    bunch = sk_digits()
    return Samples((bunch.data / 16.0).astype(np.float32), bunch.target.astype(np.int64))


def load_blobs(cfg: Blobs, n_clients: int, rngs: RngTree) -> Samples:
    from sklearn.datasets import make_blobs

    x, y = make_blobs(n_samples=cfg.n_samples, n_features=cfg.n_features, centers=cfg.centers,
                      cluster_std=cfg.cluster_std, random_state=rngs.int_seed("data/blobs") % 2**32)
    return Samples(x.astype(np.float32), y.astype(np.int64))


def load_synthetic(cfg: Synthetic, n_clients: int, rngs: RngTree) -> Samples:
    """FedProx Synthetic(alpha, beta), generated client by client (see the config)."""
    rng = rngs.stream("data/synthetic")
    d, c = cfg.n_features, cfg.n_classes
    sizes = np.minimum(rng.lognormal(4.0, 2.0, size=n_clients).astype(np.int64) + 50,
                       cfg.max_samples_per_client)
    std = np.power(np.arange(1, d + 1, dtype=float), -1.2) ** 0.5
    xs, ys = [], []
    for k in range(n_clients):
        u, b = rng.normal(0.0, cfg.alpha), rng.normal(0.0, cfg.beta)
        w = rng.normal(u, 1.0, size=(d, c))
        bias = rng.normal(u, 1.0, size=c)
        v = rng.normal(b, 1.0, size=d)
        x = v + rng.standard_normal((sizes[k], d)) * std
        xs.append(x.astype(np.float32))
        ys.append(np.argmax(x @ w + bias, axis=1).astype(np.int64))
    groups = np.repeat(np.arange(n_clients), sizes)
    return Samples(np.concatenate(xs), np.concatenate(ys), groups)


_LOADERS = {Digits: load_digits, Blobs: load_blobs, Synthetic: load_synthetic}


def load_samples(cfg: Dataset, n_clients: int, rngs: RngTree) -> Samples:
    return _LOADERS[type(cfg)](cfg, n_clients, rngs)
