"""The cnn workload (child side): one round of FedAvg's CNN per cohort size, simfl's
batched and inline executors against a plain loop, repetitions interleaved."""

from __future__ import annotations

import time

from .flops import matmul_peak_gflops, training_flop_per_sample
from .reference import BATCH, CNN_ARMS, LR, N_CLIENTS, SEED
from .reference_arms import plain_round


def cnn_module(channels: int, side: int):
    """FedAvg's CNN as torch.nn modules (the plain loop's model)."""
    import torch

    nn = torch.nn
    flat = 64 * (side // 4) ** 2
    return nn.Sequential(nn.Conv2d(channels, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(flat, 512), nn.ReLU(), nn.Linear(512, 10))


def summed_deltas(updates, names):
    """The sum of the updates' deltas (what FedAvg's aggregation needs)."""
    import torch

    total = [torch.zeros_like(updates[0].delta[k]) for k in names]
    for u in updates:
        torch._foreach_add_(total, [u.delta[k] for k in names])
    return total


def arm_cnn(cohorts: list[int], repeats: int) -> dict:
    """One round of training for each cohort size: simfl batched, simfl inline and a plain
    loop, interleaved; the first repetition is a warm-up and is dropped."""
    import numpy as np
    import torch

    import simfl
    from simfl.core.records import TrainJob
    from simfl.core.rng import RngTree
    from simfl.train.batched import BatchedExecutor
    from simfl.train.data import build_data
    from simfl.train.executor import InlineExecutor
    from simfl.train.models import build_model

    task = simfl.Task(dataset=simfl.Mnist5k(), partition=simfl.Iid(), model=simfl.Cnn(),
                      n_clients=N_CLIENTS, batch_size=BATCH, local_epochs=1, lr=LR,
                      test_fraction=0.2)
    rngs = RngTree(SEED)
    data = build_data(task, rngs)
    cpu = torch.device("cpu")
    net = build_model(task.model, data.input_shape, data.n_classes)
    params = net.init(torch.Generator().manual_seed(SEED))
    names = list(params)
    executors = {"batched": BatchedExecutor(net, data, task, rngs, cpu),
                 "inline": InlineExecutor(net, data, task, rngs, cpu)}
    module = cnn_module(data.input_shape[0], data.input_shape[1])
    x = torch.from_numpy(data.x_train).view(-1, *data.input_shape)
    y = torch.from_numpy(data.y_train)
    state = dict(zip(module.state_dict(), (params[k] for k in names)))  # same order
    rng = np.random.default_rng(SEED)

    def plain(clients) -> None:
        plain_round(module, state, clients, data.client_indices, x, y, rng)

    times: dict = {f"{k}/{arm}": [] for k in cohorts for arm in CNN_ARMS}
    for rep in range(repeats + 1):
        for cohort in cohorts:
            clients = rng.choice(N_CLIENTS, size=cohort, replace=False).tolist()
            jobs = [TrainJob(c, 0, rep) for c in clients]
            for arm in CNN_ARMS:
                start = time.perf_counter()
                if arm == "plain":
                    plain(clients)
                else:
                    summed_deltas(executors[arm].submit(jobs, {0: params}), names)
                if rep:
                    times[f"{cohort}/{arm}"].append(time.perf_counter() - start)
    flop = training_flop_per_sample(net) * 40  # per client: 40 samples, 1 epoch
    return {"round_s": times, "flop_per_client": flop,
            "peak_gflops": matmul_peak_gflops(1, repeats=5)}
