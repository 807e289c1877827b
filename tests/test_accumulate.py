"""Summing updates as they are made (FedAvg's ``needs = "sum"``) and minibatch plans drawn
for all jobs at once: the same results as separate deltas and per-batch plans."""

import dataclasses
import functools

import numpy as np
import pytest
import torch
from conftest import outcome

from simfl.algorithms import build_aggregator
from simfl.algorithms.report import N_AGGREGATED, STEPPED
from simfl.core.config import Digits, Dirichlet, Logreg, Mlp, Task
from simfl.core.config.server import FedAvg, FedProx
from simfl.core.records import TrainJob
from simfl.core.rng import RngTree
from simfl.train.batched import BatchedExecutor
from simfl.train.data import build_data
from simfl.train.executor import InlineExecutor, SummedUpdates
from simfl.train.local import job_plan, job_plans, minibatch_plan
from simfl.train.models import build_model

CPU = torch.device("cpu")


# ------------------------------------------------------------------ plans

def reference_plan(n_samples, task, rng):
    """The per-batch implementation the vectorised one replaced, kept as the reference."""
    if n_samples == 0:
        return []
    b = task.batch_size
    if task.local_steps is None:
        return [perm[i:i + b] for _ in range(task.local_epochs)
                for perm in [rng.permutation(n_samples)] for i in range(0, n_samples, b)]
    b = min(b, n_samples)
    n_perms = -(-task.local_steps * b // n_samples)
    stream = np.concatenate([rng.permutation(n_samples) for _ in range(n_perms)])
    return [stream[i * b:(i + 1) * b] for i in range(task.local_steps)]


def reference_padding(plans, n_steps):
    """The per-(client, step) loop that padded the plans, kept as the reference."""
    total = int(n_steps[0])
    width = max(len(b) for plan in plans for b in plan)
    index = np.zeros((total, len(plans), width), dtype=np.int64)
    weight = np.zeros((total, len(plans), width), dtype=np.float64)
    sizes = np.zeros((total, len(plans)), dtype=np.int64)
    for c, plan in enumerate(plans):
        for t, batch in enumerate(plan):
            n = len(batch)
            index[t, c, :n] = batch
            index[t, c, n:] = batch[0]
            weight[t, c, :n] = 1.0 / n
            sizes[t, c] = n
    out = []
    for t in range(total):
        k_t = int(np.count_nonzero(n_steps > t))
        b_t = int(sizes[t, :k_t].max())
        out.append((k_t, index[t, :k_t, :b_t], weight[t, :k_t, :b_t]))
    return out


WORKS = [{"local_epochs": 1}, {"local_epochs": 3}, {"local_steps": 1}, {"local_steps": 7}]


def task_of(work, batch_size, model=Logreg(), partition=None, n_clients=16):
    extra = {} if partition is None else {"partition": partition}
    return Task(dataset=Digits(), model=model, n_clients=n_clients, batch_size=batch_size,
                lr=0.1, **work, **extra)


@pytest.mark.parametrize("work", WORKS, ids=lambda w: "-".join(f"{k}{v}" for k, v in w.items()))
@pytest.mark.parametrize("batch_size", [1, 8, 32, 50])
def test_minibatch_plan_equals_the_per_batch_reference(work, batch_size):
    task = task_of(work, batch_size)
    for n in (0, 1, 5, 8, 31, 32, 33, 40, 97):
        new = minibatch_plan(n, task, np.random.default_rng(n))
        old = reference_plan(n, task, np.random.default_rng(n))
        assert len(new) == len(old)
        for a, b in zip(new, old):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("work", WORKS, ids=lambda w: "-".join(f"{k}{v}" for k, v in w.items()))
@pytest.mark.parametrize("batch_size", [3, 16])
def test_job_plans_and_padding_equal_the_reference(work, batch_size):
    task = task_of(work, batch_size, partition=Dirichlet(alpha=0.1, min_samples=1))
    rngs = RngTree(2)
    data = build_data(task, rngs)
    assert len(set(data.n_samples.tolist())) > 5  # clients of many sizes
    jobs = [TrainJob(c, 0, r) for r, c in enumerate(np.random.default_rng(0).permutation(16))]
    samples, sizes, n_steps = job_plans(jobs, data.client_indices, task, rngs)
    plans = []
    for job in jobs:
        idx = data.client_indices[job.client]
        plans.append([idx[b] for b in reference_plan(
            len(idx), task, rngs.stream(f"train/client/{job.client}/round/{job.round}"))])
        # job_plan itself, as the inline executor draws it
        assert all(np.array_equal(idx[a], b) for a, b in
                   zip(job_plan(job, len(idx), task, rngs), plans[-1]))
    assert n_steps.tolist() == [len(p) for p in plans]
    assert sizes.tolist() == [len(b) for p in plans for b in p]
    np.testing.assert_array_equal(samples, np.concatenate([b for p in plans for b in p]))
    # the padded steps of the batched executor, in stack order (longest plan first)
    order = np.argsort(-n_steps, kind="stable")
    net = build_model(task.model, data.input_shape, data.n_classes)
    executor = BatchedExecutor(net, data, task, rngs, CPU)
    samples, sizes, _ = job_plans([jobs[i] for i in order], data.client_indices, task, rngs)
    new = executor._pad_plans(samples, sizes, n_steps[order])
    old = reference_padding([plans[i] for i in order], n_steps[order])
    assert len(new) == len(old)
    for (k_a, i_a, w_a), (k_b, i_b, w_b) in zip(new, old):
        assert k_a == k_b
        np.testing.assert_array_equal(i_a.numpy(), i_b)
        np.testing.assert_allclose(w_a.numpy(), w_b, rtol=1e-7)


# ------------------------------------------------------------------ summing

def setup(model, work=None, partition=None):
    task = task_of(work or {"local_epochs": 1}, 8, model, partition)
    rngs = RngTree(0)
    data = build_data(task, rngs)
    net = build_model(task.model, data.input_shape, data.n_classes)
    versions = {r: net.init(torch.Generator().manual_seed(r)) for r in (3, 4)}
    return task, rngs, data, net, versions


def round_outcome(clients, multiplicity=()):
    base = outcome(5, clients)
    return dataclasses.replace(base, multiplicity=tuple(multiplicity))


@pytest.mark.parametrize("executor", [InlineExecutor, BatchedExecutor])
@pytest.mark.parametrize("weighting", ["data", "uniform", "multiplicity"])
@pytest.mark.parametrize("algorithm", [FedAvg, FedProx])
def test_summed_updates_aggregate_like_separate_deltas(executor, weighting, algorithm):
    task, rngs, data, net, versions = setup(Mlp(hidden=(16,)),
                                            partition=Dirichlet(alpha=0.3, min_samples=1))
    cfg = algorithm(weighting=weighting, server_lr=0.7)
    agg = build_aggregator(cfg, task.lr, 16)
    assert agg.needs == "sum"
    clients = [int(c) for c in np.random.default_rng(3).permutation(16)[:11]]
    multiplicity = [1 + c % 3 for c in clients] if weighting == "multiplicity" else ()
    out = round_outcome(clients, multiplicity)
    jobs = [TrainJob(c, 3 + i % 2, 5, agg.client_payload(None, c)) for i, c in enumerate(clients)]
    ex = executor(net, data, task, rngs, CPU)
    separate = ex.submit(jobs, versions)
    summed = ex.submit(jobs, versions, weigh=functools.partial(agg.sum_weight, out))
    assert isinstance(summed, SummedUpdates) and not isinstance(separate, SummedUpdates)
    # the records the run keeps are the same, in job order; only the deltas are gone
    assert [(u.client, u.base_round, u.n_samples) for u in summed] == \
        [(u.client, u.base_round, u.n_samples) for u in separate]
    assert [u.train_loss for u in summed] == pytest.approx([u.train_loss for u in separate])
    assert all(u.delta == {} for u in summed) and summed.n_summed == len(jobs)
    params = versions[4]
    a, _, ma = agg.aggregate(None, params, out, separate)
    b, _, mb = agg.aggregate(None, params, out, summed)
    assert ma == mb and mb[N_AGGREGATED] == len(jobs) and mb[STEPPED] == 1.0
    for name in params:
        torch.testing.assert_close(b[name], a[name], atol=1e-6, rtol=1e-5)
        assert not torch.equal(b[name], params[name])


@pytest.mark.parametrize("executor", [InlineExecutor, BatchedExecutor])
def test_the_sum_does_not_depend_on_arrival_order(executor):
    task, rngs, data, net, versions = setup(Logreg(), {"local_steps": 3})
    agg = build_aggregator(FedAvg(), task.lr, 16)
    jobs = [TrainJob(c, 3 + c % 2, 5) for c in range(12)]
    out = round_outcome(list(range(12)))
    weigh = functools.partial(agg.sum_weight, out)
    ex = executor(net, data, task, rngs, CPU)
    one = ex.submit(jobs, versions, weigh=weigh)
    other = ex.submit(jobs[::-1], versions, weigh=weigh)
    assert [u.client for u in other] == [j.client for j in jobs[::-1]]
    for name in one.weighted_sum:
        assert torch.equal(one.weighted_sum[name], other.weighted_sum[name])


def test_fedavg_refuses_a_sum_made_with_other_weights():
    task, rngs, data, net, versions = setup(Logreg())
    agg = build_aggregator(FedAvg(weighting="data"), task.lr, 16)
    jobs = [TrainJob(c, 3, 5) for c in range(4)]
    ex = BatchedExecutor(net, data, task, rngs, CPU)
    summed = ex.submit(jobs, versions, weigh=lambda client, n: 1.0)  # uniform, not data
    with pytest.raises(ValueError, match="weights other than FedAvg's"):
        agg.aggregate(None, versions[3], round_outcome(list(range(4))), summed)


def test_an_all_zero_weight_sum_leaves_the_model_and_counts_the_updates():
    task, rngs, data, net, versions = setup(Logreg())
    agg = build_aggregator(FedAvg(weighting="multiplicity"), task.lr, 16)
    out = round_outcome([0, 1], multiplicity=[0, 0])
    summed = BatchedExecutor(net, data, task, rngs, CPU).submit(
        [TrainJob(0, 3, 5), TrainJob(1, 3, 5)], versions,
        weigh=functools.partial(agg.sum_weight, out))
    params, _, metrics = agg.aggregate(None, versions[3], out, summed)
    assert params is versions[3]
    assert metrics[N_AGGREGATED] == 2 and metrics[STEPPED] == 0.0


def test_an_empty_submission_sums_nothing():
    task, rngs, data, net, versions = setup(Logreg())
    for executor in (InlineExecutor, BatchedExecutor):
        summed = executor(net, data, task, rngs, CPU).submit([], versions, weigh=lambda c, n: 1.0)
        assert isinstance(summed, SummedUpdates) and len(summed) == 0
    agg = build_aggregator(FedAvg(), task.lr, 16)
    params, _, metrics = agg.aggregate(None, versions[3], round_outcome([]), summed)
    assert params is versions[3] and metrics[N_AGGREGATED] == 0


def test_a_run_sums_fedavg_updates_and_counts_them(tiny_scenario, tmp_path, monkeypatch):
    """Whole runs: the summing path and the separate-delta path evaluate the same models,
    and every trained update is counted as aggregated."""
    import csv

    import simfl
    from simfl.algorithms.fedavg import FedAvg as FedAvgRule

    given = []
    original = FedAvgRule.aggregate

    def noting(self, state, params, outcome, updates):
        given.append(isinstance(updates, SummedUpdates))
        return original(self, state, params, outcome, updates)

    monkeypatch.setattr(FedAvgRule, "aggregate", noting)
    summed = simfl.run(tiny_scenario, tmp_path / "a")
    assert given and all(given)  # every round's updates came summed
    monkeypatch.setattr(FedAvgRule, "needs", None)
    given.clear()
    separate = simfl.run(tiny_scenario, tmp_path / "b")
    assert given and not any(given)
    for result in (summed, separate):
        assert result.summary["trained_updates"] == result.summary["aggregated_updates"] > 0

    def evals(result):
        with open(result.out_dir / "evals.csv") as f:
            return [[float(v) for v in row.values()] for row in csv.DictReader(f)]

    a, b = evals(summed), evals(separate)
    assert len(a) == len(b) > 1
    for row_a, row_b in zip(a, b):
        assert row_a == pytest.approx(row_b, abs=1e-4)


def test_a_slice_of_summed_updates_keeps_the_whole_sum_and_its_count():
    task, rngs, data, net, versions = setup(Logreg())
    summed = BatchedExecutor(net, data, task, rngs, CPU).submit(
        [TrainJob(c, 3, 5) for c in range(4)], versions, weigh=lambda c, n: float(n))
    part = summed[1:]
    assert isinstance(part, SummedUpdates) and len(part) == 3 and part.n_summed == 4
    assert part.weights == summed.weights[1:] and part.weighted_sum is summed.weighted_sum
    assert summed[0].client == 0
