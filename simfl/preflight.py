"""Checks of a scenario that need no training, run by ``simfl validate`` and before a run.

A :class:`~simfl.core.config.Scenario` validates each field and the rules between
fields when it is built. Some problems show only against the data, the files or the
machine: more clients than training samples, a partition that cannot give every client
its minimum, a per-client list of the wrong length, a trace file that is missing or
malformed, or a population too large for the memory available. :func:`preflight` finds
those before anything large is allocated, so that ``simfl validate`` passing means
``simfl run`` does not fail on its input. Errors are :class:`ConfigError` (exit 2, one
line naming the field).

Import cost: numpy and the timing-side modules only, never torch.
"""

from __future__ import annotations

import math
import os
import resource
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simfl.core.config import Scenario
from simfl.core.config.availability import Bernoulli, Trace
from simfl.core.config.dataset import Blobs, Digits, Mnist5k, Quadratic, Synthetic
from simfl.core.config.network import RelayMac, SlottedAlohaMac
from simfl.core.config.server import FedAvgIS
from simfl.core.errors import ConfigError
from simfl.core.rng import RngTree

#: the largest model size in bytes (a petabyte; ``model_bytes * 8`` bits stays in int64)
MAX_MODEL_BYTES = 10**15
#: simulator memory per registered client: speeds, sizes, availability, battery and
#: energy arrays (measured: about 60 bytes without and 170 with a battery; rounded up)
BYTES_PER_CLIENT = 256
#: memory per invitee of a round: its records, events and the sampler's views
BYTES_PER_INVITEE = 2048
#: copies of the data set alive while it is loaded, split and partitioned
DATA_COPIES = 3


def preflight(scenario: Scenario) -> None:
    """Raise a :class:`ConfigError` for the first problem that training would not fix.

    Order: sizes and memory first (nothing is allocated before), then the per-client
    lists, the data set against the partition, and the trace file.
    """
    check_sizes(scenario)
    check_uplink_rate(scenario)
    check_memory(scenario)
    check_per_client_lists(scenario)
    check_labels_exist(scenario)
    check_data(scenario)
    check_trace(scenario)


def check_sizes(scenario: Scenario) -> None:
    """Sizes that fit the int64 arithmetic of the simulator."""
    model_bytes = scenario.network.model_bytes
    if model_bytes is not None and model_bytes > MAX_MODEL_BYTES:
        raise ConfigError("network.model_bytes", model_bytes,
                          f"a size in bytes of at most {MAX_MODEL_BYTES:.0e}")


def check_uplink_rate(scenario: Scenario) -> None:
    """A finite uplink rate: a run converts airtime to bits at the uplink's nominal rate
    (the energy model), which an infinite rate leaves undefined. (An infinite downlink
    rate is fine: downloads then take no time.)"""
    rate = getattr(scenario.network.uplink.rate, "rate_bps", None)
    if rate is not None and math.isinf(rate):
        raise ConfigError("network.uplink.rate.rate_bps", rate,
                          "a finite uplink rate in a run (the energy model converts airtime "
                          "to bits at the uplink's nominal rate; an infinite downlink rate is "
                          "allowed)")


# ---------------------------------------------------------------------------------
# memory


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
    usually loaded already), ``run.events`` logs (they grow with the run) and data sets
    of unknown kinds.
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


def available_memory() -> tuple[float, str]:
    """The memory this process can still use, in bytes, and where the limit comes from.

    The smallest of: the system's available memory (``MemAvailable``), the cgroup's
    limit less its usage, and the address-space or data-size limits (``ulimit -v``,
    ``ulimit -d``) less what the process already maps.
    """
    found: list[tuple[float, str]] = []
    meminfo = _read_kib_table(Path("/proc/meminfo"))
    if "MemAvailable" in meminfo:
        found.append((meminfo["MemAvailable"], "available system memory"))
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        limit, usage = _read_number(limit_file), _read_number(usage_file)
        if limit is not None and limit < 2**60:
            found.append((limit - (usage or 0), "the cgroup memory limit"))
    status = _read_kib_table(Path("/proc/self/status"))
    for rlimit, mapped, name in ((resource.RLIMIT_AS, "VmSize", "ulimit -v"),
                                 (resource.RLIMIT_DATA, "VmData", "ulimit -d")):
        soft, _ = resource.getrlimit(rlimit)
        if soft != resource.RLIM_INFINITY:
            found.append((soft - status.get(mapped, 0.0), f"the {name} limit"))
    if not found:
        return math.inf, "no limit found"
    free_bytes, source = min(found)
    return max(free_bytes, 0.0), source


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
    return "task.dataset", 0.0, 0.0


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


def _read_kib_table(path: Path) -> dict[str, float]:
    """``Name: 123 kB`` lines as bytes."""
    table: dict[str, float] = {}
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return table
    for line in lines:
        name, _, rest = line.partition(":")
        words = rest.split()
        if len(words) == 2 and words[1] == "kB" and words[0].isdigit():
            table[name] = int(words[0]) * 1024.0
    return table


def _read_number(path: str) -> float | None:
    try:
        text = Path(path).read_text().strip()
    except OSError:
        return None
    return float(text) if text.isdigit() else None


# ---------------------------------------------------------------------------------
# the scenario against its data, lists and files


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
    if isinstance(mac, SlottedAlohaMac):
        lists.append(("network.mac.access_prob", mac.access_prob))
    if isinstance(mac, RelayMac):
        lists.append(("network.mac.probs", mac.probs))
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


def check_trace(scenario: Scenario) -> None:
    """A trace availability model's file exists and parses."""
    availability = scenario.population.availability
    if isinstance(availability, Trace):
        from simfl.sim.trace import load_trace

        if not os.path.isfile(availability.path):
            raise ConfigError("population.availability.path", availability.path,
                              "the path of an existing trace file")
        load_trace(availability.path, availability.format, availability.period_s)
