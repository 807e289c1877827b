"""What a run needs in memory: an estimate by part (clients, one round's invitees, the
data set, the stacked models of training), each part naming the scenario field that
drives it, checked against what the machine can give (:mod:`simfl.preflight.machine`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simfl.core.config import Scenario
from simfl.core import datafiles
from simfl.core.config.dataset import (Blobs, Cifar10, Cifar100, Digits, Idx, Mnist5k, Npz,
                                       Quadratic, Synthetic)
from simfl.core.errors import ConfigError
from simfl.preflight.machine import available_memory

#: simulator memory per registered client: speeds, sizes, availability, battery and
#: energy arrays (measured: about 60 bytes without and 170 with a battery; rounded up)
BYTES_PER_CLIENT = 256
#: memory per invitee of a round: its records, events and the sampler's views
BYTES_PER_INVITEE = 2048
#: copies of the data set alive while it is loaded, split and partitioned
DATA_COPIES = 3


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes a run needs, by what needs them; each part names the field that drives it."""

    parts: dict[str, tuple[str, float]]  # what -> (field, bytes)

    @property
    def total(self) -> float:
        return sum(b for _, b in self.parts.values())

    def largest_field(self) -> str:
        return max(self.parts.values(), key=lambda part: part[1])[0]

    def describe(self) -> str:
        shown = [f"{what} {_gb(b)}" for what, (_, b) in self.parts.items() if b >= 2**20]
        return ", ".join(shown)


def estimate_memory(scenario: Scenario) -> MemoryEstimate:
    """An estimate (an upper bound in the usual cases) of a run's peak memory in bytes.

    Counted: the simulator's per-client arrays, one round's invitees, the data set when
    the run loads it (training, label-based availability or sessions, or a partition
    without a size model) and the stacked models of a round's training. Not counted:
    what does not grow with the scenario (Python, numpy, torch: a few hundred MB,
    usually loaded already), ``run.events`` logs (they grow with the run), LEAF JSON
    (each file is capped instead) and data sets of unknown kinds.
    """
    task, server, run = scenario.task, scenario.server, scenario.run
    n = task.n_clients
    invitees = min(n, math.ceil(server.overcommit * server.clients_per_round))
    parts = {
        "clients": ("task.n_clients", float(n) * BYTES_PER_CLIENT),
        "one round's invitees": ("server.clients_per_round", float(invitees) * BYTES_PER_INVITEE),
    }
    if _loads_data(scenario):
        field, n_samples, sample_bytes = _data_size(scenario)
        parts["data set"] = (field, DATA_COPIES * n_samples * sample_bytes)
    if not run.timing_only:
        n_params = _n_params(scenario)
        # the stacked copies of a round's training: parameters, gradients, updates
        parts["training"] = ("server.clients_per_round", 4.0 * n_params * (4 * invitees + 8))
    return MemoryEstimate(parts)


def check_memory(scenario: Scenario, available: tuple[float, str] | None = None) -> None:
    """Refuse a scenario whose estimated memory exceeds what the machine can give."""
    estimate = estimate_memory(scenario)
    free_bytes, source = available if available is not None else available_memory()
    if estimate.total > free_bytes:
        field = estimate.largest_field()
        value = _get(scenario, field)
        raise ConfigError(field, value, f"a scenario that fits in memory: it needs about "
                          f"{_gb(estimate.total)} ({estimate.describe()}) but {_gb(free_bytes)} "
                          f"is available ({source})")


def _loads_data(scenario: Scenario) -> bool:
    from simfl.train.partition import has_size_model

    sessions = scenario.population.sessions
    return (not scenario.run.timing_only or scenario.population.availability.needs_labels
            or (sessions is not None and sessions.split_labels)
            or not has_size_model(scenario.task.partition))


def _data_size(scenario: Scenario) -> tuple[str, float, float]:
    """(field, number of samples, bytes per sample) of the data set, without loading it."""
    task = scenario.task
    dataset = task.dataset
    try:
        n_features, n_classes = dataset.shape()
    except NotImplementedError:  # a kind without a size known in advance
        return "task.dataset", 0.0, 0.0
    sample_bytes = 4.0 * n_features + 8.0  # float32 features, an int64 label
    if isinstance(dataset, (Digits, Mnist5k)):
        return "task.dataset", float(5000 if isinstance(dataset, Mnist5k) else 1797), sample_bytes
    if isinstance(dataset, Blobs):
        return "task.dataset.n_samples", float(dataset.n_samples), sample_bytes
    if isinstance(dataset, Synthetic):  # mean of min(LogNormal(4, 2) + 50, cap) <= the min of means
        per_client = min(math.exp(4.0 + 2.0 ** 2 / 2) + 50, dataset.max_samples_per_client)
        return "task.n_clients", task.n_clients * per_client, sample_bytes
    if isinstance(dataset, Quadratic):
        return ("task.n_clients", float(task.n_clients) * dataset.samples_per_client,
                4.0 + 12.0 * dataset.dim)
    info = _file_info(dataset)
    if info is not None:  # both splits, as the headers or file sizes declare them
        return "task.dataset.path", float(info.n_train + info.n_test), sample_bytes
    return "task.dataset", 0.0, 0.0


def _file_info(dataset: object) -> datafiles.FileInfo | None:
    """The sizes a data set's files declare (IDX and npz headers, CIFAR file sizes)."""
    if isinstance(dataset, Idx):
        return dataset.info()
    if isinstance(dataset, (Cifar10, Cifar100)):
        return datafiles.cifar_info(dataset.path, hundred=isinstance(dataset, Cifar100))
    if isinstance(dataset, Npz):
        return datafiles.npz_info(dataset.path)
    return None


def _n_params(scenario: Scenario) -> float:
    """The model's parameter count, from its parameter shapes (no torch)."""
    from simfl.train.models import PARAM_BYTES, model_bytes

    task = scenario.task
    return model_bytes(task.model, task.dataset.input_shape(), task.dataset.shape()[1]) / PARAM_BYTES


def _get(scenario: Scenario, field: str) -> object:
    node: object = scenario
    for part in field.split("."):
        node = getattr(node, part)
    return getattr(node, "kind", node)


def _gb(n_bytes: float) -> str:
    return f"{n_bytes / 1e9:,.2f} GB" if n_bytes >= 1e8 else f"{n_bytes / 1e6:,.0f} MB"
