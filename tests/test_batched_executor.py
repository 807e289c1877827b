"""BatchedExecutor: the same updates as InlineExecutor, computed for all clients at once."""

import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from simfl.core.config import Digits, Dirichlet, Iid, Logreg, Mlp, Task
from simfl.core.records import TrainJob
from simfl.core.rng import RngTree
from simfl.train.batched import BatchedExecutor
from simfl.train.data import build_data
from simfl.train.executor import InlineExecutor
from simfl.train.models import build_model

ATOL = 1e-5
CPU = torch.device("cpu")
DEVICES = [CPU, pytest.param(torch.device("cuda"), marks=[pytest.mark.cuda, pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device")])]
REPO = Path(__file__).resolve().parents[1]


def make_task(partition=Iid(), model=Logreg(), work=None, weight_decay=0.0, batch_size=16):
    work = work or {"local_epochs": 1}
    return Task(dataset=Digits(), partition=partition, model=model, n_clients=16,
                batch_size=batch_size, lr=0.1, weight_decay=weight_decay, **work)


def setup(task, seed=0, device=CPU):
    rngs = RngTree(seed)
    data = build_data(task, rngs)
    net = build_model(task.model, data.input_shape, data.n_classes)
    versions = {r: {k: v.to(device) for k, v in net.init(torch.Generator().manual_seed(r)).items()}
                for r in (3, 4)}
    return rngs, data, net, versions


def both(task, data, net, rngs, jobs, versions, device=CPU):
    inline = InlineExecutor(net, data, task, rngs, device).submit(jobs, versions)
    batched = BatchedExecutor(net, data, task, rngs, device).submit(jobs, versions)
    return inline, batched


def assert_same_updates(inline, batched):
    assert len(inline) == len(batched)
    for a, b in zip(inline, batched):
        assert (a.client, a.base_round, a.n_samples) == (b.client, b.base_round, b.n_samples)
        assert a.delta.keys() == b.delta.keys()
        for name in a.delta:
            assert a.delta[name].shape == b.delta[name].shape
            assert a.delta[name].device == b.delta[name].device
            err = (a.delta[name] - b.delta[name]).abs().max().item()
            assert err <= ATOL, f"client {a.client} {name}: max |diff| {err}"
        assert b.train_loss == pytest.approx(a.train_loss, abs=ATOL)


@pytest.mark.parametrize("partition", [Iid(), Dirichlet(alpha=0.1, min_samples=1)],
                         ids=["iid", "dirichlet"])
@pytest.mark.parametrize("work", [{"local_epochs": 2}, {"local_steps": 5}], ids=["epochs", "steps"])
@pytest.mark.parametrize("model", [Logreg(), Mlp(hidden=(32, 16))], ids=["logreg", "mlp2"])
@pytest.mark.parametrize("weight_decay", [0.0, 1e-2], ids=["wd0", "wd"])
def test_matches_inline_executor(partition, work, model, weight_decay):
    task = make_task(partition, model, work, weight_decay)
    rngs, data, net, versions = setup(task)
    if isinstance(partition, Dirichlet):  # the cases padding and masking exist for
        sizes = data.n_samples
        assert len(set(sizes.tolist())) > 5 and sizes.min() < task.batch_size < sizes.max()
    # every client, in scrambled order, from two different model versions
    clients = np.random.default_rng(1).permutation(task.n_clients).tolist()
    jobs = [TrainJob(client=c, base_round=3 + (i % 2), round=5) for i, c in enumerate(clients)]
    inline, batched = both(task, data, net, rngs, jobs, versions)
    assert [u.client for u in batched] == clients
    assert_same_updates(inline, batched)


def rule_payloads(rule, clients, params):
    """Each client's payload for ``rule``, with client-specific numbers."""
    rng = np.random.default_rng(7)
    if rule == "sgd":
        return [None] * len(clients)
    if rule == "scaled_sgd":
        return [{"loss_scale": float(s)} for s in rng.uniform(0.2, 3.0, len(clients))]
    if rule == "prox":
        return [{"mu": float(m)} for m in rng.uniform(0.0, 2.0, len(clients))]
    if rule == "scaffold":
        gen = torch.Generator().manual_seed(3)
        c = {k: 0.1 * torch.randn(v.shape, generator=gen) for k, v in params.items()}
        return [{"c": c, "c_i": {k: 0.1 * torch.randn(v.shape, generator=gen)
                                 for k, v in params.items()}} for _ in clients]
    # cvar: t around the typical loss, so both branches occur
    return [{"cvar": {"t": float(t), "alpha": 0.3, "lam": 0.3, "lr_t": 0.05}}
            for t in rng.uniform(0.5, 3.0, len(clients))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("rule", ["sgd", "scaled_sgd", "prox", "scaffold", "cvar"])
@pytest.mark.parametrize("work", [{"local_epochs": 2}, {"local_steps": 4}], ids=["epochs", "steps"])
def test_every_local_rule_matches_inline(rule, work, device):
    task = make_task(Dirichlet(alpha=0.1, min_samples=1), Mlp(hidden=(16,)), work, weight_decay=1e-2)
    rngs, data, net, versions = setup(task, device=device)
    clients = np.random.default_rng(2).permutation(task.n_clients)[:6].tolist()
    payloads = rule_payloads(rule, clients, versions[3])
    jobs = [TrainJob(c, 3 + i % 2, 5, p) for i, (c, p) in enumerate(zip(clients, payloads))]
    inline, batched = both(task, data, net, rngs, jobs, versions, device)
    assert_same_updates(inline, batched)
    for a, b in zip(inline, batched):
        assert a.extra.keys() == b.extra.keys()
        if rule == "cvar":
            assert b.extra["t"] == pytest.approx(a.extra["t"], abs=ATOL)
        if rule == "scaffold":
            for name, value in a.extra["delta_c"].items():
                assert torch.allclose(value, b.extra["delta_c"][name], atol=1e-4, rtol=1e-4)
    if rule != "sgd":  # the rule changes the result
        plain = InlineExecutor(net, data, task, rngs, device).submit(
            [dataclasses.replace(j, payload=None) for j in jobs], versions)
        assert any((p.delta[k] - a.delta[k]).abs().max() > 1e-4
                   for p, a in zip(plain, inline) for k in a.delta)


@pytest.mark.parametrize("rule", ["sgd", "scaffold", "cvar"])
def test_chunks_of_a_few_clients_match_inline(rule):
    """On a CPU a submission is trained in cache-sized chunks; chunks of 3 clients here
    (of differing plan lengths and model versions) give the inline results too."""
    task = make_task(Dirichlet(alpha=0.1, min_samples=1), Mlp(hidden=(16,)), {"local_epochs": 2},
                     weight_decay=1e-2)
    rngs, data, net, versions = setup(task)
    clients = list(range(task.n_clients))
    payloads = rule_payloads(rule, clients, versions[3])
    jobs = [TrainJob(c, 3 + c % 2, 5, p) for c, p in zip(clients, payloads)]
    batched = BatchedExecutor(net, data, task, rngs, CPU)
    per_client_bytes = sum(4 * v.numel() for v in versions[3].values())
    batched.cpu_chunk_bytes = 3 * per_client_bytes
    inline = InlineExecutor(net, data, task, rngs, CPU).submit(jobs, versions)
    first, again = batched.submit(jobs, versions), batched.submit(jobs, versions)  # reused buffers
    assert_same_updates(inline, first)
    assert_same_updates(inline, again)
    for a, b in zip(inline, first):
        if rule == "cvar":
            assert b.extra["t"] == pytest.approx(a.extra["t"], abs=ATOL)
        if rule == "scaffold":
            for name, value in a.extra["delta_c"].items():
                assert torch.allclose(value, b.extra["delta_c"][name], atol=1e-4, rtol=1e-4)


def with_lr_scale(payloads, scales):
    return [{**(p or {}), "lr_scale": float(s)} for p, s in zip(payloads, scales)]


@pytest.mark.parametrize("rule", ["sgd", "prox", "scaffold", "cvar"])
@pytest.mark.parametrize("weight_decay", [0.0, 1e-2], ids=["wd0", "wd"])
@pytest.mark.parametrize("scales", ["shared", "per_client"])
def test_lr_scale_matches_inline(rule, weight_decay, scales):
    """A scaled step size trains the same in both executors: one scale for every job (the
    schedule's case; with sgd and no weight decay the fused step) or one per job."""
    task = make_task(Dirichlet(alpha=0.1, min_samples=1), Mlp(hidden=(16,)),
                     {"local_steps": 4}, weight_decay=weight_decay)
    rngs, data, net, versions = setup(task)
    clients = np.random.default_rng(4).permutation(task.n_clients)[:6].tolist()
    values = [0.25] * 6 if scales == "shared" else np.linspace(0.2, 1.5, 6)
    payloads = with_lr_scale(rule_payloads(rule, clients, versions[3]), values)
    jobs = [TrainJob(c, 3 + i % 2, 5, p) for i, (c, p) in enumerate(zip(clients, payloads))]
    inline, batched = both(task, data, net, rngs, jobs, versions)
    assert_same_updates(inline, batched)
    for a, b, s in zip(inline, batched, values):
        assert a.extra["lr_scale"] == b.extra["lr_scale"] == pytest.approx(s, abs=1e-12)
        if rule == "scaffold":
            for name, value in a.extra["delta_c"].items():
                assert torch.allclose(value, b.extra["delta_c"][name], atol=1e-4, rtol=1e-4)
    unscaled = InlineExecutor(net, data, task, rngs, CPU).submit(
        [dataclasses.replace(j, payload=with_lr_scale([j.payload], [1.0])[0]) for j in jobs],
        versions)
    assert all((u.delta[k] - a.delta[k]).abs().max() > 1e-4
               for u, a in zip(unscaled, inline) for k in ["layer0.weight"])


@pytest.mark.parametrize("executor", [InlineExecutor, BatchedExecutor])
@pytest.mark.parametrize("rule", ["sgd", "prox", "scaffold"])
def test_one_step_with_scaled_lr_is_the_scaled_step(executor, rule):
    """One local step from w with step size s * lr is exactly s times the step with lr
    (weight decay, the proximal term at w and the SCAFFOLD correction all scale with
    it); SCAFFOLD's delta_c = -c + (w - y) / (K s lr) does not depend on s after one step."""
    task = make_task(Iid(), Logreg(), {"local_steps": 1}, weight_decay=1e-2)
    rngs, data, net, versions = setup(task)
    payloads = rule_payloads(rule, [0, 5, 9], versions[3])
    jobs = [TrainJob(c, 3, 5, p) for c, p in zip([0, 5, 9], payloads)]
    run = executor(net, data, task, rngs, CPU)
    plain = run.submit(jobs, versions)
    scaled = run.submit([dataclasses.replace(j, payload=p) for j, p in
                         zip(jobs, with_lr_scale(payloads, [0.3] * 3))], versions)
    for a, b in zip(plain, scaled):
        for name in a.delta:
            assert torch.allclose(b.delta[name], 0.3 * a.delta[name], atol=1e-6, rtol=0)
        if rule == "scaffold":
            for name, value in a.extra["delta_c"].items():
                assert torch.allclose(b.extra["delta_c"][name], value, atol=1e-5, rtol=0)


@pytest.mark.parametrize("device", DEVICES)
def test_one_version_subset_of_clients(device):
    task = make_task(Dirichlet(alpha=0.1, min_samples=1), Mlp(hidden=(32, 16)), {"local_epochs": 1})
    rngs, data, net, versions = setup(task, device=device)
    jobs = [TrainJob(client=c, base_round=4, round=9) for c in (7, 2, 11)]
    inline, batched = both(task, data, net, rngs, jobs, versions, device)
    assert_same_updates(inline, batched)


def test_does_not_mutate_versions_and_deltas_own_their_storage():
    task = make_task(model=Mlp(hidden=(8,)))
    rngs, data, net, versions = setup(task)
    before = {r: {k: v.clone() for k, v in p.items()} for r, p in versions.items()}
    jobs = [TrainJob(client=c, base_round=3, round=0) for c in range(4)]
    updates = BatchedExecutor(net, data, task, rngs, CPU).submit(jobs, versions)
    for r in versions:
        for k in versions[r]:
            assert torch.equal(versions[r][k], before[r][k])
    pointers = {u.delta[k].untyped_storage().data_ptr() for u in updates for k in u.delta}
    assert len(pointers) == 4 * len(versions[3])
    assert all(not d.requires_grad for u in updates for d in u.delta.values())


@pytest.mark.parametrize("work", [{"local_epochs": 1}, {"local_steps": 3}], ids=["epochs", "steps"])
def test_client_without_samples_gets_a_zero_delta(work):
    task = make_task(Dirichlet(alpha=0.1, min_samples=1), Mlp(hidden=(16, 8)), work,
                     weight_decay=1e-2)
    rngs, data, net, versions = setup(task)
    empty = np.array([], dtype=np.int64)
    data = dataclasses.replace(data, client_indices=(*data.client_indices[:5], empty,
                                                     *data.client_indices[6:]))
    jobs = [TrainJob(client=c, base_round=3 + c % 2, round=1) for c in (4, 5, 6)]
    inline, batched = both(task, data, net, rngs, jobs, versions)
    assert_same_updates(inline, batched)
    empty_update = batched[1]
    assert empty_update.client == 5 and empty_update.n_samples == 0
    assert all(torch.count_nonzero(d) == 0 for d in empty_update.delta.values())
    assert empty_update.train_loss == inline[1].train_loss
    # only clients without samples: nothing to train
    only_empty = BatchedExecutor(net, data, task, rngs, CPU).submit([jobs[1]], versions)
    assert all(torch.count_nonzero(d) == 0 for d in only_empty[0].delta.values())


def test_no_jobs():
    task = make_task()
    rngs, data, net, versions = setup(task)
    assert BatchedExecutor(net, data, task, rngs, CPU).submit([], versions) == []


def test_training_does_not_import_dynamo():
    """torch._dynamo costs about a second per process; a fresh process proves it is not loaded."""
    script = textwrap.dedent("""
        import sys
        import torch
        from simfl.core.config import Digits, Dirichlet, Mlp, Task
        from simfl.core.records import TrainJob
        from simfl.core.rng import RngTree
        from simfl.train.batched import BatchedExecutor
        from simfl.train.data import build_data
        from simfl.train.models import build_model

        task = Task(dataset=Digits(), partition=Dirichlet(alpha=0.3), model=Mlp(hidden=(16, 8)),
                    n_clients=6, batch_size=16, local_epochs=1, weight_decay=1e-3)
        rngs = RngTree(0)
        data = build_data(task, rngs)
        net = build_model(task.model, data.input_shape, data.n_classes)
        params = net.init(torch.Generator().manual_seed(0))
        updates = BatchedExecutor(net, data, task, rngs, torch.device("cpu")).submit(
            [TrainJob(client=c, base_round=0, round=0) for c in range(6)], {0: params})
        assert len(updates) == 6
        print("dynamo loaded:", "torch._dynamo" in sys.modules)
    """)
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=env, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "dynamo loaded: False" in result.stdout
