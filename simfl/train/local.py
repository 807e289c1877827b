"""Local training rules and the minibatch plan they follow."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from simfl.core.config import Task
from simfl.core.records import TrainJob
from simfl.core.rng import RngTree
from simfl.train.models import DenseNet, Params


def minibatch_plan(n_samples: int, task: Task, rng: np.random.Generator) -> list[np.ndarray]:
    """Indices (into the client's samples) of each local step's minibatch.

    Epochs: each epoch is a fresh permutation cut into batches of ``batch_size`` (the
    last may be smaller). Steps: ``local_steps`` batches of ``min(batch_size, n)`` taken
    from back-to-back permutations. The plan depends only on the client's stream, so
    every executor follows the same one.
    """
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


def job_plan(job: TrainJob, n_samples: int, task: Task, rngs: RngTree) -> list[np.ndarray]:
    """The minibatch plan of ``job``, from the stream ``train/client/C/round/R``."""
    return minibatch_plan(n_samples, task, rngs.stream(f"train/client/{job.client}/round/{job.round}"))


def sgd(net: DenseNet, start: Params, x: torch.Tensor, y: torch.Tensor,
        plan: list[np.ndarray], lr: float, weight_decay: float) -> tuple[Params, float]:
    """Plain minibatch SGD from ``start``; returns the local model and the mean loss."""
    params = {k: v.detach().clone().requires_grad_(True) for k, v in start.items()}
    total = 0.0
    for batch in plan:
        idx = torch.from_numpy(batch)
        loss = F.cross_entropy(net.forward(params, x[idx]), y[idx])
        grads = torch.autograd.grad(loss, list(params.values()))
        with torch.no_grad():
            for p, g in zip(params.values(), grads):
                if weight_decay:
                    g = g + weight_decay * p
                p.sub_(lr * g)
        total += loss.item()
    local = {k: v.detach() for k, v in params.items()}
    return local, total / max(len(plan), 1)
