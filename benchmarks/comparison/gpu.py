"""The gpu workload (child side): client updates per second of the batched executor on
a CUDA device, CIFAR-10-shaped random images, no simulator."""

from __future__ import annotations

import time

from .cnn import summed_deltas
from .reference import LR, SEED, steady_median_ms


def arm_gpu(rounds: int, device: str, users: int) -> dict:
    """Client updates per second of FedAvg's CNN on CIFAR-10-shaped images (random pixels
    and labels: the speed does not depend on them), batched executor on ``device``."""
    import numpy as np
    import torch

    import simfl
    from simfl.core.records import TrainJob
    from simfl.core.rng import RngTree
    from simfl.train.batched import BatchedExecutor
    from simfl.train.data import FederatedData
    from simfl.train.models import build_model

    if device == "cuda" and not torch.cuda.is_available():
        return {"skipped": "no CUDA device"}
    cohort, per_user, shape = 50, 50, (3, 32, 32)
    rng = np.random.default_rng(SEED)
    n = users * per_user
    x = rng.random((n + 1000, 3 * 32 * 32), dtype=np.float32)
    y = rng.integers(0, 10, n + 1000)
    parts = tuple(np.arange(u * per_user, (u + 1) * per_user) for u in range(users))
    data = FederatedData(x[:n], y[:n], parts, x[n:], y[n:], x.shape[1], 10, shape)
    # the task gives the local work (5 steps of 10), the step size and the loss
    task = simfl.Task(dataset=simfl.Digits(), model=simfl.Cnn(), n_clients=users,
                      batch_size=10, local_steps=5, lr=LR)
    dev = torch.device(device)
    net = build_model(task.model, shape, 10)
    params = {k: v.to(dev) for k, v in net.init(torch.Generator().manual_seed(SEED)).items()}
    executor = BatchedExecutor(net, data, task, RngTree(SEED), dev)
    names = list(params)
    round_s = []
    for r in range(rounds):
        jobs = [TrainJob(int(c), 0, r) for c in rng.choice(users, size=cohort, replace=False)]
        if dev.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        summed_deltas(executor.submit(jobs, {0: params}), names)
        if dev.type == "cuda":
            torch.cuda.synchronize()
        round_s.append(time.perf_counter() - start)
    return {"round_s": round_s, "updates_per_s": cohort / (steady_median_ms(round_s) / 1e3),
            "device": torch.cuda.get_device_name() if device == "cuda" else device}
