"""Timing-only runs: client sizes from the partition's size model, no samples made."""

import csv

import numpy as np
import pytest

import simfl
from simfl import apply_overrides, run
from simfl.core.config import Blobs, Digits, Dirichlet, Iid, Native, Shards, Synthetic, Task, parse_override
from simfl.core.errors import ConfigError
from simfl.core import registry as registry_module
from simfl.core.registry import REGISTRIES
from simfl.core.rng import RngTree
from simfl.train import datasets
from simfl.train.data import build_data, client_sizes

TIMING_COLUMNS = ("round", "t_open_s", "t_close_s", "n_available", "n_selected", "n_received",
                  "n_late", "n_erased", "n_offline")


def rows(path):
    with open(path) as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("dataset, partition", [
    (Digits(), Iid()), (Digits(), Shards(per_client=3)), (Blobs(n_samples=500), Dirichlet()),
    (Synthetic(), Iid()), (Synthetic(), Shards(per_client=2)), (Synthetic(), Native())])
def test_size_model_matches_the_materialised_partition(dataset, partition):
    task = Task(dataset=dataset, partition=partition, n_clients=23, test_fraction=0.3)
    expected = build_data(task, RngTree(5)).n_samples
    assert np.array_equal(client_sizes(task, RngTree(5)), expected)


def test_size_model_reports_too_many_clients():
    with pytest.raises(ConfigError, match="task.n_clients"):
        client_sizes(Task(dataset=Digits(), n_clients=5000), RngTree(0))


@pytest.fixture
def no_samples(monkeypatch):
    """Fail the test if any data set's samples are made."""
    def refuse(*args, **kwargs):
        raise AssertionError("a timing-only run loaded samples")
    monkeypatch.setattr(datasets, "load_samples", refuse)
    for kind in REGISTRIES["datasets"]:
        monkeypatch.setitem(registry_module._IMPLEMENTATIONS, kind.obj, refuse)


def test_a_million_synthetic_clients_cost_sizes_not_samples(no_samples, tmp_path):
    scenario = simfl.Scenario(
        name="huge", seed=0,
        task=simfl.Task(dataset=simfl.Synthetic(), partition=simfl.Native(), n_clients=10**6),
        server=simfl.Server(clients_per_round=20, deadline_s=1e4),
        run=simfl.Run(rounds=2, timing_only=True))
    result = run(scenario, tmp_path / "huge")
    table = rows(result.out_dir / "rounds.csv")
    assert [int(r["n_available"]) for r in table] == [10**6, 10**6]
    assert [int(r["n_received"]) for r in table] == [20, 20]
    assert result.summary["trained_updates"] == result.summary["aggregated_updates"] == 0


@pytest.mark.parametrize("partition", ["shards", "native"])
def test_timing_columns_equal_the_materialised_run(tiny_scenario, partition, tmp_path):
    """Sizes drive compute times, so any mismatch of the size model shows up here."""
    scenario = apply_overrides(tiny_scenario, [parse_override(p) for p in (
        "task.dataset.kind=synthetic", f"task.partition.kind={partition}",
        "population.compute.median_samples_per_s=15")])
    real = rows(run(scenario, tmp_path / "real").out_dir / "rounds.csv")
    fast = rows(run(apply_overrides(scenario, [parse_override("run.timing_only=true")]),
                    tmp_path / "fast").out_dir / "rounds.csv")
    assert [[r[c] for c in TIMING_COLUMNS] for r in real] == \
        [[r[c] for c in TIMING_COLUMNS] for r in fast]
    assert sum(int(r["n_late"]) for r in real) > 0  # sizes matter to the outcome
