"""The asynchronous modes with training, against training by hand with the same executor
and random streams: FedAsync with alpha = 1 and one client is sequential local training;
FedBuff with K = k, constant s and eta_g = 1 is FedAvg (uniform) on the same arrivals."""

import csv

import numpy as np
import pytest
import torch

import simfl
from simfl.algorithms.fedavg import FedAvg
from simfl.core.records import Arrival, RoundOutcome, TrainJob
from simfl.experiment import run_scenario
from simfl.experiment.build import build_context, build_online, build_trainer


def rows(path):
    with open(path) as handle:
        return list(csv.DictReader(handle))


def scenario(mode, n_clients, sigma, rounds, **run):
    return simfl.Scenario(
        name="async_training", seed=4,
        task=simfl.Task(dataset=simfl.Digits(), model=simfl.Logreg(), n_clients=n_clients,
                        batch_size=16, local_steps=4, lr=0.2),
        population=simfl.Population(compute=simfl.Compute(median_samples_per_s=50.0,
                                                          sigma=sigma)),
        network=simfl.Network(uplink=simfl.ErasureChannel(p=0.2), arq_max_attempts=3),
        server=simfl.Server(clients_per_round=3, deadline_s=60.0, mode=mode),
        run=simfl.Run(rounds=rounds, **run))


def fresh_trainer(s):
    """The run's initial model and executor, built again from the scenario."""
    ctx = build_context(s)
    return build_trainer(ctx, build_online(ctx))


def assert_close(got, expected):
    assert got.keys() == expected.keys()
    for name in got:
        assert torch.allclose(got[name], expected[name], atol=1e-6, rtol=0), name


def test_async_with_alpha_one_and_one_client_is_sequential_local_training(tmp_path):
    s = scenario(simfl.AsyncMode(alpha=1.0, staleness="constant", concurrency=1), 1, 0.0, 5)
    result = run_scenario(s, tmp_path / "run")
    updates = rows(result.out_dir / "updates.csv")
    assert [(int(u["base_version"]), int(u["staleness"])) for u in updates] == [
        (v, 0) for v in range(5)]
    trainer = fresh_trainer(s)
    w = trainer.params
    for v, u in enumerate(updates):  # w_{v+1} = w_v + the local update trained from w_v
        (done,) = trainer.step.executor.submit([TrainJob(0, v, int(u["job"]))], {v: w})
        w = {name: w[name] + done.delta[name] for name in w}
    assert_close(result.params, w)
    w0 = fresh_trainer(s).params
    assert any(not torch.equal(w[name], w0[name]) for name in w)  # the model moved


def test_buffered_with_k_equal_concurrency_is_fedavg_uniform_on_the_same_arrivals(tmp_path):
    k = 3
    s = scenario(simfl.BufferedMode(buffer_size=k, staleness="constant", server_lr=1.0,
                                    concurrency=k), 8, 0.8, 6, eval_every_s=5.0)
    result = run_scenario(s, tmp_path / "run")
    updates = rows(result.out_dir / "updates.csv")
    assert len(updates) == 6 * k
    assert any(int(u["staleness"]) > 0 for u in updates)  # stale updates are in the test
    trainer = fresh_trainer(s)
    fedavg = FedAvg(simfl.FedAvg(weighting="uniform"), s.task.lr)
    versions = {0: trainer.params}
    for v in range(6):
        group = [u for u in updates if int(u["applied_version"]) == v]
        jobs = [TrainJob(int(u["client"]), int(u["base_version"]), int(u["job"]))
                for u in group]
        done = trainer.step.executor.submit(jobs, versions)
        outcome = RoundOutcome(v, 0.0, 1.0, 1.0, k, tuple(j.client for j in jobs),
                               tuple(Arrival(j.client, j.base_round, 0.5, 1) for j in jobs), ())
        versions[v + 1], _, _ = fedavg.aggregate(None, versions[v], outcome, done)
    assert_close(result.params, versions[6])
    # evaluations every 5 simulated seconds, version counts never decreasing
    evals = rows(result.out_dir / "evals.csv")
    times = [float(e["t_s"]) for e in evals[1:-1]]
    assert times == [5.0 * (i + 1) for i in range(len(times))]
    counts = [int(e["round"]) for e in evals]
    assert counts == sorted(counts) and counts[-1] == 6


@pytest.mark.parametrize("mode", ["async", "buffered"])
def test_training_runs_keep_trained_equal_to_aggregated(tmp_path, mode):
    s = scenario(simfl.AsyncMode(concurrency=4) if mode == "async"
                 else simfl.BufferedMode(buffer_size=2, concurrency=4), 10, 0.8, 8)
    result = run_scenario(s, tmp_path / mode)
    table = rows(result.out_dir / "rounds.csv")
    assert all(r["trained_updates"] == r["aggregated_updates"] == r["n_received"]
               for r in table)
    assert result.summary["trained_updates"] == len(rows(result.out_dir / "updates.csv"))
    assert np.isfinite(result.summary["final_accuracy"])


def test_versions_are_kept_only_while_a_client_at_work_needs_one(tmp_path, monkeypatch):
    from simfl.experiment.async_loop import ContinuousLoop

    kept = []
    step = ContinuousLoop._step

    def watched(self, s):
        step(self, s)
        needed = self.clock.needed_versions() | {self.version}
        kept.append((set(self.versions), needed))

    monkeypatch.setattr(ContinuousLoop, "_step", watched)
    s = scenario(simfl.AsyncMode(concurrency=3, staleness="hinge", staleness_a=1.0,
                                 staleness_b=1.0), 10, 1.0, 15)
    run_scenario(s, tmp_path / "run")
    assert len(kept) == 15
    assert all(versions == needed and len(versions) <= 4 for versions, needed in kept)
    assert any(len(versions) > 1 for versions, _ in kept)  # stale clients held old versions


def test_fedprox_trains_in_the_async_modes(tmp_path):
    s = scenario(simfl.BufferedMode(buffer_size=2, concurrency=3), 6, 0.5, 4)
    s = simfl.apply_overrides(s, [("server.algorithm", "fedprox"),
                                  ("server.algorithm.mu", 0.5)])
    result = run_scenario(s, tmp_path / "run")
    assert result.summary["aggregated_updates"] == 8
