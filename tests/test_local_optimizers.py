"""Local optimisers (task.optimizer): torch.optim's arithmetic, state policies, schedules,
and the same updates from the inline and the batched executor."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from simfl.core.config import Digits, Dirichlet, Iid, Logreg, Mlp, Task
from simfl.core.config.local_optimizer import Adam, AdamW, CosineStep, Sgd, StepDecay, WarmupStep
from simfl.core.errors import ConfigError
from simfl.core.records import TrainJob
from simfl.core.rng import RngTree
from simfl.train.batched import BatchedExecutor
from simfl.train.data import build_data
from simfl.train.executor import InlineExecutor
from simfl.train.local import job_plan
from simfl.train.models import build_model

CPU = torch.device("cpu")


def task_with(optimizer, model=Logreg(), partition=Iid(), weight_decay=0.0, **work):
    work = work or {"local_epochs": 2}
    return Task(dataset=Digits(), partition=partition, model=model, n_clients=8, batch_size=16,
                lr=0.05, weight_decay=weight_decay, optimizer=optimizer, **work)


def setup(task):
    rngs = RngTree(0)
    data = build_data(task, rngs)
    net = build_model(task.model, data.input_shape, data.n_classes)
    params = net.init(torch.Generator().manual_seed(0))
    return rngs, data, net, params


def torch_loop(task, data, net, params, rngs, client, rounds, make_opt, persistent):
    """Client ``client`` trained by hand with a torch.optim optimiser on its plans of
    ``rounds`` rounds, each round from ``params`` (the same start every round)."""
    x, y = torch.from_numpy(data.x_train), torch.from_numpy(data.y_train)
    idx = data.client_indices[client]
    opt_state = None
    for r in rounds:
        leaves = {k: v.clone().requires_grad_(True) for k, v in params.items()}
        opt = make_opt(list(leaves.values()))
        if persistent and opt_state is not None:
            opt.load_state_dict(opt_state)
        for batch in job_plan(TrainJob(client, 0, r), len(idx), task, rngs):
            opt.zero_grad()
            F.cross_entropy(net.forward(leaves, x[idx[batch]]), y[idx[batch]]).backward()
            opt.step()
        opt_state = opt.state_dict()
    return {k: v.detach() for k, v in leaves.items()}


def simfl_rounds(executor_cls, task, data, net, params, rngs, client, rounds):
    ex = executor_cls(net, data, task, rngs, CPU)
    for r in rounds:
        (update,) = ex.submit([TrainJob(client, 0, r)], {0: params})
    return {k: params[k] + update.delta[k] for k in params}


def assert_close(a, b, tol=1e-6):
    for k in a:
        err = (a[k] - b[k]).abs().max().item()
        assert err <= tol, f"{k}: max |diff| {err}"


@pytest.mark.parametrize("executor_cls", [InlineExecutor, BatchedExecutor])
@pytest.mark.parametrize("nesterov", [False, True])
def test_sgd_momentum_equals_torch_sgd(executor_cls, nesterov):
    task = task_with(Sgd(momentum=0.9, nesterov=nesterov), weight_decay=1e-3)
    rngs, data, net, params = setup(task)
    ours = simfl_rounds(executor_cls, task, data, net, params, rngs, 3, [0])
    ref = torch_loop(task, data, net, params, rngs, 3, [0], lambda p: torch.optim.SGD(
        p, lr=0.05, momentum=0.9, nesterov=nesterov, weight_decay=1e-3), False)
    assert_close(ours, ref)
    plain = simfl_rounds(executor_cls, task_with(Sgd()), data, net, params, rngs, 3, [0])
    assert max((plain[k] - ours[k]).abs().max().item() for k in ours) > 1e-3  # momentum acts


@pytest.mark.parametrize("executor_cls", [InlineExecutor, BatchedExecutor])
def test_adam_state_policy_both_ways(executor_cls):
    rounds = [0, 1]
    results = {}
    for state in ("reset", "per_client"):
        task = task_with(Adam(state=state))
        rngs, data, net, params = setup(task)
        results[state] = simfl_rounds(executor_cls, task, data, net, params, rngs, 2, rounds)
        ref = torch_loop(task, data, net, params, rngs, 2, rounds,
                         lambda p: torch.optim.Adam(p, lr=0.05), state == "per_client")
        assert_close(results[state], ref, 1e-5)
    diff = max((results["reset"][k] - results["per_client"][k]).abs().max().item()
               for k in params)
    assert diff > 1e-4  # the kept moments change round 2


def test_adamw_equals_torch_adamw():
    task = task_with(AdamW(weight_decay=0.1))
    rngs, data, net, params = setup(task)
    ours = simfl_rounds(InlineExecutor, task, data, net, params, rngs, 1, [0])
    ref = torch_loop(task, data, net, params, rngs, 1, [0],
                     lambda p: torch.optim.AdamW(p, lr=0.05, weight_decay=0.1), False)
    assert_close(ours, ref, 1e-5)


@pytest.mark.parametrize("optimizer", [
    Sgd(momentum=0.9), Sgd(momentum=0.9, dampening=0.5, state="per_client"), Adam(),
    AdamW(state="per_client", schedule=CosineStep(warmup_steps=2)),
    Sgd(schedule=StepDecay(every_steps=2, gamma=0.5))], ids=str)
@pytest.mark.parametrize("model", [Logreg(), Mlp(hidden=(16,))], ids=["logreg", "mlp"])
def test_inline_and_batched_agree(optimizer, model):
    task = task_with(optimizer, model, Dirichlet(alpha=0.3, min_samples=1), weight_decay=1e-3
                     if not isinstance(optimizer, AdamW) else 0.0)
    rngs, data, net, params = setup(task)
    inline, batched = InlineExecutor(net, data, task, rngs, CPU), \
        BatchedExecutor(net, data, task, rngs, CPU)
    for r in range(2):  # two rounds: the kept state of round 0 feeds round 1
        jobs = [TrainJob(c, 0, r) for c in range(task.n_clients)]
        a, b = inline.submit(jobs, {0: params}), batched.submit(jobs, {0: params})
        for ua, ub in zip(a, b):
            assert_close(ua.delta, ub.delta, 1e-5)
    assert inline.kept.keys() == batched.kept.keys()


def test_step_schedule_values():
    cosine = CosineStep(warmup_steps=2, min_scale=0.1)
    assert [cosine.scale(t, 6) for t in range(2)] == [0.5, 1.0]
    assert cosine.scale(2, 6) == 1.0
    assert cosine.scale(4, 6) == pytest.approx(0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi / 2)))
    step = StepDecay(every_steps=3, gamma=0.5)
    assert [step.scale(t, 10) for t in range(7)] == [1, 1, 1, 0.5, 0.5, 0.5, 0.25]
    warm = WarmupStep(warmup_steps=4)
    assert [warm.scale(t, 10) for t in range(6)] == [0.25, 0.5, 0.75, 1.0, 1.0, 1.0]


def test_schedule_changes_the_steps():
    task = task_with(Sgd(schedule=WarmupStep(warmup_steps=1000)), local_steps=1)
    rngs, data, net, params = setup(task)
    warm = simfl_rounds(InlineExecutor, task, data, net, params, rngs, 0, [0])
    plain = simfl_rounds(InlineExecutor, task_with(Sgd(), local_steps=1), data, net, params,
                         rngs, 0, [0])
    for k in params:  # one step at scale 1/1000
        assert torch.allclose(warm[k] - params[k], (plain[k] - params[k]) / 1000, atol=1e-7)


def test_bad_optimizer_settings_name_the_field():
    with pytest.raises(ConfigError, match="momentum"):
        Sgd(momentum=1.5)
    with pytest.raises(ConfigError, match="state"):
        Adam(state="forever")
    with pytest.raises(ConfigError, match="weight_decay"):
        task_with(AdamW(), weight_decay=0.1)


def test_the_local_training_page_example_runs(tmp_path):
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "local-training.md").read_text()
    (example,) = re.findall(r"```python\n(.*?)```", page, re.S)
    ran = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True,
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(root)}, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "runs" / "local_training_demo" / "summary.json").is_file()


def test_summed_updates_with_kept_state_agree():
    """The aggregators that take the weighted sum (FedAvg) get it from both executors."""
    task = task_with(Adam(state="per_client"), Mlp(hidden=(16,)), Dirichlet(alpha=0.3,
                                                                            min_samples=1))
    rngs, data, net, params = setup(task)
    jobs = [TrainJob(c, 0, 0) for c in range(task.n_clients)]
    sums = [cls(net, data, task, rngs, CPU).submit(jobs, {0: params},
                                                   weigh=lambda c, n: 1.0 + c / 10).weighted_sum
            for cls in (InlineExecutor, BatchedExecutor)]
    assert_close(*sums, 1e-4)


def test_kept_state_goes_into_checkpoints(tmp_path):
    import shutil

    from simfl.core.config import apply_overrides, load_scenario, parse_override
    from simfl.experiment import resume_run, run_scenario

    def scenario(*extra):
        return apply_overrides(load_scenario("quickstart"), [parse_override(s) for s in (
            "run.rounds=5", "task.optimizer.kind=adam", "task.optimizer.state=per_client",
            "task.lr=0.01", "task.n_clients=10", "server.clients_per_round=8",
            "server.deadline_s=60", *extra)])

    plain = run_scenario(scenario(), tmp_path / "plain")
    kept = run_scenario(scenario("run.checkpoint_every_rounds=3"), tmp_path / "kept").out_dir
    for name in ("summary.json", "clients.csv"):
        (kept / name).unlink()
    resumed = resume_run(kept)
    assert resumed.summary["resumed_after_round"] == 3
    for name, value in plain.params.items():  # the kept moments came back
        assert torch.equal(value, resumed.params[name]), name
