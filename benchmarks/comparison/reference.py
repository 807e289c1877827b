"""The reference workload every arm shares: the arms' names, the workload's constants,
its task and data split as simfl makes them, the plain torch model, and the steady-state
round time."""

from __future__ import annotations

import functools
import statistics

REFERENCE_ARMS = ("simfl_batched", "simfl_inline", "plain", "flower")
ALL_ARMS = REFERENCE_ARMS + ("cnn", "scale", "gpu", "pfl", "kernel")
ALL_ARMS += ("multicell",)  # 57 interfering cells (comparison/multicell.py)
CNN_ARMS = ("batched", "inline", "plain")
MODELS = {"logreg": (), "mlp": (100,)}
COHORTS = (10, 100)
N_CLIENTS, BATCH, LR, SEED = 100, 32, 0.05, 0
WARMUP_ROUNDS = 2


def reference_task(model: str):
    from simfl.core.config import Iid, Logreg, Mlp, Mnist5k, Task

    net = Logreg() if model == "logreg" else Mlp(hidden=MODELS[model])
    return Task(dataset=Mnist5k(), partition=Iid(), model=net, n_clients=N_CLIENTS,
                batch_size=BATCH, local_epochs=1, lr=LR, test_fraction=0.2)


@functools.lru_cache(maxsize=None)
def reference_data(model: str):
    """The reference split as simfl makes it (the same arrays for every arm)."""
    from simfl.core.rng import RngTree
    from simfl.train.data import build_data

    return build_data(reference_task(model), RngTree(SEED))


def torch_module(model: str):
    import torch

    widths = (784, *MODELS[model], 10)
    layers = []
    for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
        layers.append(torch.nn.Linear(a, b))
        if i + 2 < len(widths):
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def steady_median_ms(round_s: list[float]) -> float:
    steady = round_s[WARMUP_ROUNDS:] or round_s
    return 1e3 * statistics.median(steady)
