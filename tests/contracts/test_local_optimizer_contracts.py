"""The contract of every registered local optimiser and per-step schedule.

local_optimizers  the kind builds from its defaults, with either state policy; one round of
                  a few clients trains to finite models that differ from the start; the
                  inline and the batched executor give the same updates; with
                  ``state = "per_client"`` a client's kept state is written after its job,
                  survives a checkpoint's save and load, and the next round trained from
                  the loaded state equals the one trained from the kept state.
step_schedules    the kind builds from its defaults; every scale is in (0, 1]; a warm-up of
                  w steps scales step t < w by (t + 1) / w.
"""

import dataclasses

import pytest
import torch

from simfl.core.config import Digits, Dirichlet, Mlp, Task
from simfl.core.records import TrainJob
from simfl.core.rng import RngTree
from simfl.experiment import checkpoint
from simfl.train.batched import BatchedExecutor
from simfl.train.data import build_data
from simfl.train.executor import InlineExecutor
from simfl.train.models import build_model

from .kinds import config_of, kinds

CASES: dict = {}
CPU = torch.device("cpu")


def round_of(executor, r, params):
    return executor.submit([TrainJob(c, 0, r) for c in range(4)], {0: params})


@pytest.mark.parametrize("name", kinds("local_optimizers"))
def test_local_optimizer_contract(name, tmp_path):
    config = dataclasses.replace(config_of("local_optimizers", name, CASES), state="per_client")
    task = Task(dataset=Digits(), partition=Dirichlet(alpha=0.5, min_samples=1),
                model=Mlp(hidden=(8,)), n_clients=4, batch_size=16, lr=0.02, optimizer=config)
    rngs = RngTree(1)
    data = build_data(task, rngs)
    net = build_model(task.model, data.input_shape, data.n_classes)
    params = net.init(torch.Generator().manual_seed(0))
    inline, batched = (cls(net, data, task, rngs, CPU) for cls in (InlineExecutor, BatchedExecutor))
    a, b = round_of(inline, 0, params), round_of(batched, 0, params)
    for ua, ub in zip(a, b):
        assert any(bool(d.abs().max() > 0) for d in ua.delta.values())
        for key in ua.delta:
            assert torch.isfinite(ua.delta[key]).all()
            assert torch.allclose(ua.delta[key], ub.delta[key], atol=1e-5)
    folder = checkpoint.save(tmp_path, 1, {"kept": inline.kept})
    resumed = InlineExecutor(net, data, task, rngs, CPU)
    resumed.kept = checkpoint.load(folder)["kept"]
    for ua, ub in zip(round_of(inline, 1, params), round_of(resumed, 1, params)):
        for key in ua.delta:
            assert torch.equal(ua.delta[key], ub.delta[key])


@pytest.mark.parametrize("name", kinds("step_schedules"))
def test_step_schedule_contract(name):
    schedule = config_of("step_schedules", name, CASES)
    for total in (1, 7, 50):
        scales = [schedule.scale(t, total) for t in range(total)]
        assert all(0.0 < s <= 1.0 for s in scales)
    warm = dataclasses.replace(schedule, warmup_steps=4)
    assert [warm.scale(t, 20) for t in range(4)] == [0.25, 0.5, 0.75, 1.0]
